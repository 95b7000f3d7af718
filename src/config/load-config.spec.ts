import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { corsOrigins, operationalAccess } from './env.schema';
import { GatewaySettings, ConfigurationError, validateEnvironment } from './load-config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    validateEnvironment(env);
  } catch (error) {
    if (error instanceof ConfigurationError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigurationError');
}

/** A whole production configuration (live mode, every key the replicas share given), without browser sessions. */
const production = (): Record<string, string> => ({
  NODE_ENV: 'production',
  UPSTREAM_BASE_URL: 'https://provider.example',
  UPSTREAM_BEARER_TOKEN: 'token',
  UPSTREAM_PUBLIC_KEY: generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  DATABASE_URL: 'postgres://u@db/x',
  AUDIT_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
  DATA_KEY: randomBytes(32).toString('base64'),
});

describe('validateEnvironment', () => {
  it('when several features’ variables are bad, then one error names each of them, and a condition on another feature’s variable holds', () => {
    // The service's, the upstream's, the sessions' and the rate limit's: four classes, one pass.
    const problems = problemsOf({ PORT: 'eighty', UPSTREAM_TIMEOUT_MS: '5', OIDC_CLIENT_ID: 'web', RATE_LIMIT_PER_MINUTE: '0' });

    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual(['OIDC_CLIENT_SECRET', 'PORT', 'RATE_LIMIT_PER_MINUTE', 'UPSTREAM_TIMEOUT_MS']);
    // DATABASE_URL (the database's) is required once UPSTREAM_BASE_URL (the upstream's) is set.
    expect(
      problemsOf({ UPSTREAM_BASE_URL: 'https://provider.example', UPSTREAM_BEARER_TOKEN: 't', UPSTREAM_PUBLIC_KEY: production().UPSTREAM_PUBLIC_KEY }),
    ).toEqual([expect.stringMatching(/^DATABASE_URL: /)]);
  });

  it('when each feature’s variable is converted by its own class, then no other feature’s raw text takes its place', () => {
    const sut = validateEnvironment({ UPSTREAM_TIMEOUT_MS: '4000', IDEMPOTENCY_TTL_HOURS: '2', DOCS_ENABLED: 'false', METRICS_ENABLED: 'no' });

    expect([sut.UPSTREAM_TIMEOUT_MS, sut.IDEMPOTENCY_TTL_HOURS, sut.DOCS_ENABLED, sut.METRICS_ENABLED]).toEqual([4000, 2, false, false]);
  });

  it('when nothing is set, then every default applies (embedded database, sandbox mode)', () => {
    const sut = validateEnvironment({});

    expect(sut.PORT).toBe(3000);
    expect(sut.HOST).toBe('127.0.0.1');
    expect(sut.MIGRATIONS_RUN).toBe(true);
    expect(sut.DATA_DIR).toBe('./.data');
    expect(sut.DATABASE_URL).toBeUndefined();
    expect(sut.UPSTREAM_BASE_URL).toBeUndefined();
  });

  it('when values are given as strings, then they are converted to their types', () => {
    const sut = validateEnvironment({ PORT: '8080', MIGRATIONS_RUN: 'false', DOCS_ENABLED: 'no', DATABASE_POOL_SIZE: '7' });

    expect(sut.PORT).toBe(8080);
    expect(sut.MIGRATIONS_RUN).toBe(false);
    expect(sut.DOCS_ENABLED).toBe(false);
    expect(sut.DATABASE_POOL_SIZE).toBe(7);
  });

  it('when a variable is an empty string, then it counts as unset', () => {
    const sut = validateEnvironment({ DATABASE_URL: '', PORT: '  ' });

    expect(sut.DATABASE_URL).toBeUndefined();
    expect(sut.PORT).toBe(3000);
  });

  it('when several variables are bad, then one error names every one of them', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      MIGRATIONS_RUN: 'maybe',
      DATABASE_URL: 'mysql://db/x',
      UPSTREAM_ENCRYPTION: 'rot13',
    });

    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['DATABASE_URL', 'LOG_LEVEL', 'MIGRATIONS_RUN', 'PORT', 'UPSTREAM_ENCRYPTION'].sort());
  });

  it('when UPSTREAM_BASE_URL is set (live mode), then the credentials and an external database are required', () => {
    const problems = problemsOf({ UPSTREAM_BASE_URL: 'https://provider.example' });

    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['DATABASE_URL', 'UPSTREAM_BEARER_TOKEN', 'UPSTREAM_PUBLIC_KEY']);
    expect(problems.join('\n')).toContain('required when UPSTREAM_BASE_URL is set');
  });

  it('when the public key is malformed or its file unreadable, then start-up names UPSTREAM_PUBLIC_KEY and why', () => {
    const live = { UPSTREAM_BASE_URL: 'https://provider.example', UPSTREAM_BEARER_TOKEN: 't', DATABASE_URL: 'postgres://db/x' };

    expect(problemsOf({ ...live, UPSTREAM_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----' })).toEqual([
      'UPSTREAM_PUBLIC_KEY: UPSTREAM_PUBLIC_KEY is not a PEM-encoded public key',
    ]);
    expect(problemsOf({ ...live, UPSTREAM_PUBLIC_KEY: '/nonexistent/provider.pem' })).toEqual([
      'UPSTREAM_PUBLIC_KEY: UPSTREAM_PUBLIC_KEY is neither PEM text nor a readable file (ENOENT)',
    ]);
  });

  it('when the public key is given as a file or with escaped newlines, then it is accepted', () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const file = join(mkdtempSync(join(tmpdir(), 'pgw-key-')), 'provider.pem');
    writeFileSync(file, pem);
    const live = { UPSTREAM_BASE_URL: 'https://provider.example', UPSTREAM_BEARER_TOKEN: 't', DATABASE_URL: 'postgres://db/x' };

    expect(validateEnvironment({ ...live, UPSTREAM_PUBLIC_KEY: file }).UPSTREAM_PUBLIC_KEY).toBe(file);
    expect(() => validateEnvironment({ ...live, UPSTREAM_PUBLIC_KEY: pem.trim().replace(/\n/g, '\\n') })).not.toThrow();
  });

  it('when a value is bad, then the message says why without echoing the value', () => {
    const secretLooking = 'postgres-but-not-a-url-with-password-hunter2';

    const problems = problemsOf({ DATABASE_URL: secretLooking, PORT: '70000' });

    const text = problems.join('\n');
    expect(text).toContain('DATABASE_URL: DATABASE_URL must be a postgres:// URL');
    expect(text).toMatch(/PORT: .*must not be greater than 65535/);
    expect(text).not.toContain('hunter2');
  });

  it('when a number is half-numeric, then it is refused rather than truncated', () => {
    expect(problemsOf({ PORT: '80abc' })[0]).toMatch(/^PORT: /);
    expect(problemsOf({ DATABASE_POOL_SIZE: '1.5' })[0]).toMatch(/^DATABASE_POOL_SIZE: /);
  });

  it('when a unix-socket style postgres URL is given, then it is accepted', () => {
    const sut = validateEnvironment({ DATABASE_URL: 'postgresql://app@localhost/gateway?host=/var/run/postgresql' });

    expect(sut.DATABASE_URL).toContain('postgresql://');
  });
});

describe('TRUST_PROXY', () => {
  it('finding 2: when TRUST_PROXY is true in production, then start-up fails naming TRUST_PROXY, with every other bad variable', () => {
    const problems = problemsOf({ ...production(), TRUST_PROXY: 'true', PORT: 'eighty' });

    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['PORT', 'TRUST_PROXY']);
    expect(problems.find((p) => p.startsWith('TRUST_PROXY:'))).toMatch(/^TRUST_PROXY: TRUST_PROXY must not be true in production/);
  });

  it('when TRUST_PROXY names the proxies or their number, then production accepts it; outside production true is accepted too', () => {
    expect(validateEnvironment({ ...production(), TRUST_PROXY: '10.244.0.0/16' }).TRUST_PROXY).toBe('10.244.0.0/16');
    expect(validateEnvironment({ ...production(), TRUST_PROXY: '1' }).TRUST_PROXY).toBe('1');
    expect(validateEnvironment({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe('true');
    expect(validateEnvironment({}).TRUST_PROXY).toBe('false');
    expect(problemsOf({ TRUST_PROXY: 'the-load-balancer' })).toEqual([
      "TRUST_PROXY: TRUST_PROXY must be the proxies' addresses or CIDR ranges, comma-separated (10.0.0.0/8), their number (1), or false",
    ]);
  });
});

describe('SESSION_KEY', () => {
  /** A production configuration with browser sessions (OIDC_CLIENT_ID), every other variable they need given. */
  const productionWithSessions = (): Record<string, string> => ({
    ...production(),
    OIDC_ISSUER: 'https://login.partner.example',
    OIDC_CLIENT_ID: 'partner-web',
    OIDC_CLIENT_SECRET: 'a-client-secret',
    PUBLIC_BASE_URL: 'https://api.partner.example',
  });

  it('finding 5: when OIDC_CLIENT_ID is set in production without SESSION_KEY, then start-up fails naming SESSION_KEY, with every other bad variable', () => {
    const problems = problemsOf({ ...productionWithSessions(), PORT: 'eighty' });

    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['PORT', 'SESSION_KEY']);
    expect(problems.find((p) => p.startsWith('SESSION_KEY:'))).toContain('SESSION_KEY is required with OIDC_CLIENT_ID or STAFF_OIDC_ISSUER in production');
  });

  it('finding 5: when OIDC_CLIENT_ID is set in production with a SESSION_KEY, then the configuration is valid', () => {
    const key = randomBytes(32).toString('base64');

    expect(validateEnvironment({ ...productionWithSessions(), SESSION_KEY: key }).SESSION_KEY).toBe(key);
  });

  it('when there are no browser sessions in production, or it is not production, then SESSION_KEY may stay unset; a short one is refused anywhere', () => {
    const { OIDC_CLIENT_ID: _clientId, OIDC_CLIENT_SECRET: _secret, ...withoutSessions } = productionWithSessions();

    expect(validateEnvironment(withoutSessions).SESSION_KEY).toBeUndefined();
    expect(validateEnvironment({ ...productionWithSessions(), NODE_ENV: 'development' }).SESSION_KEY).toBeUndefined();
    expect(problemsOf({ SESSION_KEY: randomBytes(16).toString('base64') })).toEqual(['SESSION_KEY: SESSION_KEY must hold at least 32 bytes (hex or base64)']);
  });
});

describe('production refuses to start without a provider or a key the replicas share', () => {
  it('when NODE_ENV is production and everything is given, then the configuration is valid', () => {
    expect(validateEnvironment(production()).NODE_ENV).toBe('production');
  });

  it('when UPSTREAM_BASE_URL is empty in production, then sandbox mode is refused, named, whatever else is set', () => {
    const problems = problemsOf({ ...production(), UPSTREAM_BASE_URL: '', DOCS_PUBLIC: 'true', METRICS_PUBLIC: 'true' });

    expect(problems).toEqual([
      expect.stringMatching(/^UPSTREAM_BASE_URL: required in production \(NODE_ENV=production\): without it the service runs in sandbox mode/),
    ]);
  });

  it.each(['http://provider.example', 'http://10.0.0.7:8080/api', 'http://127.0.0.1.provider.example'])(
    'finding: when UPSTREAM_BASE_URL is %s in production, then start-up fails naming it, with every other bad variable (the bearer token would cross in clear)',
    (url) => {
      const problems = problemsOf({ ...production(), UPSTREAM_BASE_URL: url, PORT: 'eighty' });

      expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['PORT', 'UPSTREAM_BASE_URL']);
      expect(problems.find((p) => p.startsWith('UPSTREAM_BASE_URL:'))).toMatch(/must be https in production/);
    },
  );

  it.each(['http://127.0.0.1:8080', 'http://localhost:8080', 'http://[::1]:8080'])(
    'when UPSTREAM_BASE_URL is %s (loopback: a sidecar on the same host) in production, then it is accepted',
    (url) => {
      expect(validateEnvironment({ ...production(), UPSTREAM_BASE_URL: url }).UPSTREAM_BASE_URL).toBe(url);
    },
  );

  it('when UPSTREAM_BASE_URL is http outside production, then it is accepted (a provider’s test host)', () => {
    const { NODE_ENV: _production, ...development } = production();

    expect(validateEnvironment({ ...development, UPSTREAM_BASE_URL: 'http://provider.test' }).UPSTREAM_BASE_URL).toBe('http://provider.test');
  });

  it('when end users are accepted in production (their DPoP proofs name this service’s URL) without PUBLIC_BASE_URL, then start-up fails naming it', () => {
    const problems = problemsOf({ ...production(), OIDC_ISSUER: 'https://login.partner.example' });

    expect(problems).toEqual([expect.stringMatching(/^PUBLIC_BASE_URL: required in production when end users are accepted/)]);
    expect(
      validateEnvironment({ ...production(), OIDC_ISSUER: 'https://login.partner.example', PUBLIC_BASE_URL: 'https://api.partner.example' }).OIDC_ISSUER,
    ).toBe('https://login.partner.example');
  });

  it('when the keys are missing in production, then start-up fails naming each, with every other bad variable, in one error', () => {
    const { AUDIT_SIGNING_KEY: _audit, END_USER_PSEUDONYM_KEY: _pseudonym, DATA_KEY: _data, ...withoutKeys } = production();

    const problems = problemsOf({ ...withoutKeys, PORT: 'eighty' });

    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['AUDIT_SIGNING_KEY', 'DATA_KEY', 'END_USER_PSEUDONYM_KEY', 'PORT']);
    expect(problems.find((p) => p.startsWith('AUDIT_SIGNING_KEY:'))).toMatch(/required in production/);
    expect(problems.find((p) => p.startsWith('DATA_KEY:'))).toMatch(/required in production/);
  });

  it('when it is not production, or it is the stand-alone sandbox, then sandbox mode and keys under DATA_DIR are allowed', () => {
    expect(validateEnvironment({ NODE_ENV: 'development' }).UPSTREAM_BASE_URL).toBeUndefined();
    expect(validateEnvironment({ NODE_ENV: 'production' }, { sandbox: true }).NODE_ENV).toBe('production');
  });

  it.each([
    ['END_USER_PSEUDONYM_KEY', '/run/secrets/partner-gateway/end-user-pseudonym.key'],
    ['END_USER_PSEUDONYM_KEY', './keys/pseudonym.key'],
    ['SESSION_KEY', '/run/secrets/partner-gateway/session.key'],
    ['SESSION_KEY', '/data/sessionkey'],
    ['DATA_KEY', '/run/secrets/partner-gateway/data.key'],
    ['DATA_PREVIOUS_KEYS', '/run/secrets/partner-gateway/data-previous.key'],
    ['END_USER_PSEUDONYM_KEY', 'secrets/partnergateway/endUserPseudonymKeyFile12'],
  ])('when %s names a file that does not exist (%s), then it is refused, never taken for the key itself, in any mode', (variable, path) => {
    expect(problemsOf({ [variable]: path })).toEqual([
      `${variable}: ${variable} names a file that does not exist (a key given inline is hex, or base64 with no '/' or ending in '=')`,
    ]);
  });

  it('when a key given inline is base64 that starts with a slash, then its padding says it is a key', () => {
    const key = `/${randomBytes(32).toString('base64').slice(1)}`;

    expect(validateEnvironment({ SESSION_KEY: key }).SESSION_KEY).toBe(key);
  });

  it('when a key file exists, then its content is the key; the key given inline still works', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const file = join(dir, 'session.key');
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`);

    expect(validateEnvironment({ SESSION_KEY: file, END_USER_PSEUDONYM_KEY: randomBytes(32).toString('hex') }).SESSION_KEY).toBe(file);
  });

  it('when AUDIT_SIGNING_KEY names a file that does not exist, then it is refused', () => {
    expect(problemsOf({ AUDIT_SIGNING_KEY: '/run/secrets/partner-gateway/audit-signing-key.pem' })).toEqual([
      expect.stringMatching(/^AUDIT_SIGNING_KEY: AUDIT_SIGNING_KEY is neither PEM text nor a readable file \(ENOENT\)/),
    ]);
  });

  it('when METRICS_TOKEN is short, or names a file that does not exist, then it is refused; a file holding one is read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metrics-'));
    const file = join(dir, 'metrics-token');
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`);

    expect(problemsOf({ METRICS_TOKEN: 'short' })).toEqual([expect.stringMatching(/^METRICS_TOKEN: METRICS_TOKEN must be at least 32 characters/)]);
    expect(problemsOf({ METRICS_TOKEN: join(dir, 'missing') })).toEqual([
      "METRICS_TOKEN: METRICS_TOKEN names a file that does not exist (a token given inline has no '/', or is base64 ending in '=')",
    ]);
    expect(problemsOf({ METRICS_TOKEN: 'var/run/secrets/partner-gateway/metrics-token' })).toEqual([
      "METRICS_TOKEN: METRICS_TOKEN names a file that does not exist (a token given inline has no '/', or is base64 ending in '=')",
    ]);
    expect(validateEnvironment({ METRICS_TOKEN: `a/${randomBytes(32).toString('base64').slice(2)}` }).METRICS_TOKEN).toMatch(/=$/);
    expect(validateEnvironment({ METRICS_TOKEN: file }).METRICS_TOKEN).toBe(file);
  });
});

describe('operational access and CORS', () => {
  const live = {
    UPSTREAM_BASE_URL: 'https://provider.example',
    UPSTREAM_BEARER_TOKEN: 'token',
    DATABASE_URL: 'postgres://u@db/x',
  };

  it('when the service runs in sandbox mode, then docs and metrics are open', () => {
    expect(operationalAccess(validateEnvironment({}))).toEqual({ docs: 'open', metrics: 'open' });
  });

  it.each([
    [{}, { docs: 'admin', metrics: 'admin' }],
    [{ DOCS_PUBLIC: 'true' }, { docs: 'open', metrics: 'admin' }],
    [{ METRICS_PUBLIC: 'yes' }, { docs: 'admin', metrics: 'open' }],
    [{ METRICS_TOKEN: randomBytes(32).toString('base64') }, { docs: 'admin', metrics: 'token' }],
  ])('when the service runs in live mode with %j, then access is %j', (extra, expected) => {
    const config = { ...validateEnvironment(extra), ...live } as GatewaySettings;

    expect(operationalAccess(config)).toEqual(expected);
  });

  it('when CORS_ORIGINS lists origins, then they are parsed; anything but origins is refused', () => {
    expect(corsOrigins(validateEnvironment({ CORS_ORIGINS: ' https://a.example.com,http://localhost:5173 ' }))).toEqual([
      'https://a.example.com',
      'http://localhost:5173',
    ]);
    expect(corsOrigins(validateEnvironment({}))).toEqual([]);
    expect(problemsOf({ CORS_ORIGINS: '*' })[0]).toMatch(/^CORS_ORIGINS: /);
    expect(problemsOf({ CORS_ORIGINS: 'https://a.example.com/path' })[0]).toMatch(/^CORS_ORIGINS: /);
  });
});
