import { createRemoteJWKSet, JWTVerifyGetKey } from 'jose';
import { IssuerUnavailable } from '../domain/auth.errors';

/** Asymmetric JWS algorithms: the only ones an access token may be signed with (never `none`, never HMAC). */
const ASYMMETRIC = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']);

/** How long a discovery document is trusted before it is read again; and how long a failure is, so a flood of tokens does not become a flood of fetches. */
const METADATA_TTL_MS = 3_600_000;
const FAILURE_TTL_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;

/** What the service takes from an issuer's discovery document (OpenID Connect Discovery 1.0, section 3). */
export interface IssuerKeys {
  /** The issuer's keys (JWKS), fetched, cached, and fetched again on an unknown `kid` at most every 30 s (jose). */
  readonly keys: JWTVerifyGetKey;
  /** The algorithms the issuer advertises, asymmetric ones only; RS256 when it advertises none. */
  readonly algorithms: string[];
}

function loopback(url: URL): boolean {
  return url.hostname === '127.0.0.1' || url.hostname === '[::1]' || url.hostname === 'localhost';
}

/** The issuer's discovery document, checked: its `issuer` is the one configured, its keys are on TLS unless on loopback. */
async function discover(issuer: string, cooldownMs: number): Promise<IssuerKeys> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error', headers: { accept: 'application/json' } });
  if (response.status !== 200) throw new Error(`The discovery document answered ${response.status}`);
  const metadata = (await response.json()) as Record<string, unknown>;
  if (metadata.issuer !== issuer) throw new Error('The discovery document names another issuer');
  const jwksUri = typeof metadata.jwks_uri === 'string' ? URL.parse(metadata.jwks_uri) : null;
  if (!jwksUri) throw new Error('The discovery document has no jwks_uri');
  if (jwksUri.protocol !== 'https:' && !(jwksUri.protocol === 'http:' && loopback(jwksUri))) throw new Error('The jwks_uri is not https');
  const advertised = Array.isArray(metadata.id_token_signing_alg_values_supported) ? metadata.id_token_signing_alg_values_supported : [];
  const algorithms = advertised.filter((alg): alg is string => typeof alg === 'string' && ASYMMETRIC.has(alg));
  return {
    keys: createRemoteJWKSet(jwksUri, { timeoutDuration: FETCH_TIMEOUT_MS, cooldownDuration: cooldownMs, cacheMaxAge: 600_000 }),
    algorithms: algorithms.length > 0 ? algorithms : ['RS256'],
  };
}

/**
 * Each trusted issuer's keys, discovered on first use and kept: one fetch at a time per issuer,
 * a failure remembered for five seconds (IssuerUnavailable meanwhile), the document read again
 * hourly. A key rotation needs no restart: jose fetches the JWKS again when a token names a `kid`
 * it does not hold.
 */
export class IssuerDirectory {
  private readonly entries = new Map<string, { at: number; keys: Promise<IssuerKeys>; failed?: boolean }>();

  constructor(
    /** How soon after one JWKS fetch an unknown `kid` may cause another (jose's cooldown). */
    private readonly refetchCooldownMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  keysOf(issuer: string): Promise<IssuerKeys> {
    const now = this.now();
    const entry = this.entries.get(issuer);
    if (entry && now - entry.at < (entry.failed ? FAILURE_TTL_MS : METADATA_TTL_MS)) return entry.keys;
    const keys = discover(issuer, this.refetchCooldownMs);
    const fresh: { at: number; keys: Promise<IssuerKeys>; failed?: boolean } = {
      at: now,
      keys: keys.catch((error: unknown) => {
        fresh.failed = true;
        throw new IssuerUnavailable(error);
      }),
    };
    // A failure is answered to whoever waits; nobody waiting is not an unhandled rejection.
    fresh.keys.catch(() => undefined);
    this.entries.set(issuer, fresh);
    return fresh.keys;
  }
}
