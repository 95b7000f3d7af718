import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { asTrustedProvider, DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';
import { TEST_AUDIENCE } from '../support/oidc';

const USERS = join(process.cwd(), 'dist', 'dev', 'cli', 'users.cli.js');

/** Runs `npm run users --` with `input` on its standard input (closed at once when none). */
async function users(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [USERS, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** `npm run users -- token`: an end user's token from the OpenID provider, the password never on the command line. */
describe('npm run users -- token', () => {
  let idp: DevIdentityProvider;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
  });
  afterAll(async () => {
    await idp.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: '/nonexistent',
    OIDC_ISSUER: idp.issuer,
    ...extra,
  });
  const subjectOf = (stdout: string) => decodeJwt(stdout.trim()).sub;

  it('when the password comes on standard input (--password-stdin), then that password logs the user in', async () => {
    const right = await users(['token', '--user', 'demo', '--password-stdin'], env(), 'demo\n');
    // A wrong one is refused: the name (the password when none is given) is not what was used.
    const wrong = await users(['token', '--user', 'demo', '--password-stdin'], env(), 'not-demo\n');
    const none = await users(['token', '--user', 'demo', '--password-stdin'], env(), '');

    expect({ code: right.code, stderr: right.stderr }).toEqual({ code: 0, stderr: '' });
    expect(subjectOf(right.stdout)).toBe('demo');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('wrong user or password');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--password-stdin read no password');
  }, 60_000);

  it('when the password comes in USER_PASSWORD, then that password logs the user in', async () => {
    const right = await users(['token', '--user', 'alex'], env({ USER_PASSWORD: 'alex' }));
    const wrong = await users(['token', '--user', 'alex'], env({ USER_PASSWORD: 'not-alex' }));

    expect({ code: right.code, stderr: right.stderr }).toEqual({ code: 0, stderr: '' });
    expect(subjectOf(right.stdout)).toBe('alex');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('wrong user or password');
  }, 60_000);

  it('when the password is given on the command line, then it is refused with the reason and the ways that keep it off, and nothing logs in', async () => {
    const result = await users(['token', '--user', 'demo', '--password', 'demo'], env());
    const help = await users(['help'], env());

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--password is refused: every user of the machine reads a command line (ps)');
    expect(result.stderr).toContain('--password-stdin or USER_PASSWORD');
    expect(help.stdout).toContain('token --user NAME [--password-stdin]');
    expect(help.stdout).toContain('USER_PASSWORD');
    expect(help.stdout).not.toContain('--password P');
  });
});

/** `npm run users -- token --dpop` and `proof`: DPoP tried from a shell, against the gateway. */
describe('npm run users -- token --dpop, then proof', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;
  const scratch = mkdtempSync(join(tmpdir(), 'pgw-dpop-'));

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE });
    t = await startTestApp(
      { END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64') },
      { development: { identityProvider: asTrustedProvider(idp.issuer) } },
    );
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: '/nonexistent', OIDC_ISSUER: '', OIDC_AUDIENCE: TEST_AUDIENCE };

  it('when demo takes a DPoP-bound token, then it works with a proof of the printed key, a proof works once, and the token alone is refused', async () => {
    const keyFile = join(scratch, 'demo.json');
    const taken = await users(['token', '--user', 'demo', '--dpop', '--out', keyFile], { ...env, OIDC_ISSUER: idp.issuer });
    const saved = JSON.parse(readFileSync(keyFile, 'utf8')) as { access_token: string; token_type: string; dpop_key: Record<string, string> };
    const url = `${t.baseUrl}/api/v1/me`;
    const made = await users(['proof', '--key', keyFile, '--method', 'GET', '--url', url], env);
    const withProof = (proof: string) =>
      callApi<{ role: string }>(t.baseUrl, 'GET', '/api/v1/me', { headers: { authorization: `DPoP ${saved.access_token}`, dpop: proof } });

    const first = await withProof(made.stdout.trim());
    const replayed = await withProof(made.stdout.trim());
    const asBearer = await callApi(t.baseUrl, 'GET', '/api/v1/me', { token: saved.access_token });

    // The key is in the file, which only its owner reads, and nowhere on the terminal.
    expect({ code: taken.code, stdout: taken.stdout }).toEqual({ code: 0, stdout: '' });
    expect(taken.stderr).toContain(`Written to ${keyFile} (mode 600)`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(saved.token_type).toBe('DPoP');
    expect(saved.dpop_key).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String) });
    expect(decodeJwt(saved.access_token)).toMatchObject({ sub: 'demo', cnf: { jkt: expect.any(String) } });
    expect(made.code).toBe(0);
    expect([first.status, first.body.data?.role]).toEqual([200, 'end_user']);
    expect([replayed.status, replayed.body.error?.code]).toEqual([401, 'AUTH.INVALID_DPOP_PROOF']);
    expect([asBearer.status, asBearer.body.error?.code]).toEqual([401, 'AUTH.DPOP_REQUIRED']);
  }, 60_000);

  it('when proof is asked without its options or with a file that holds no key, then it says which, and prints no proof', async () => {
    const notKey = join(scratch, 'not-a-key.json');
    writeFileSync(notKey, '{"access_token":"x"}');

    const bare = await users(['proof'], env);
    const noKey = await users(['proof', '--key', notKey, '--method', 'GET', '--url', `${t.baseUrl}/api/v1/me`], env);
    const badUrl = await users(['proof', '--key', notKey, '--method', 'GET', '--url', '/api/v1/me'], env);

    expect([bare.code, bare.stdout]).toEqual([2, '']);
    expect(bare.stderr).toContain('--key, --method, --url required');
    expect([noKey.code, noKey.stdout]).toEqual([1, '']);
    expect(noKey.stderr).toContain('no dpop_key');
    expect([badUrl.code, badUrl.stdout]).toEqual([2, '']);
    expect(badUrl.stderr).toContain("--url must be the request's whole URL");
  });
});
