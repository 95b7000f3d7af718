import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** One OpenID provider whose access tokens the service accepts, and the tenant its end users belong to. */
export interface TrustedIssuer {
  /** The `iss` its tokens carry, exactly as its discovery document states it. */
  readonly issuer: string;
  /** The `aud` its tokens must name. */
  readonly audience: string;
  readonly tenant: string;
}

const TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function issuerUrl(value: unknown): string {
  if (typeof value !== 'string') throw new Error('must give each issuer as a URL');
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new Error('must give each issuer as an http(s) URL');
  if (url.search || url.hash) throw new Error('must give issuers without a query or fragment (OpenID Connect Discovery 1.0, section 2)');
  return value;
}

/** OIDC_ISSUERS: a JSON list of {"issuer", "audience", "tenant"}. Throws with a reason, never the value. */
export function readExtraIssuers(value: string): TrustedIssuer[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error('must be a JSON list of {"issuer", "audience", "tenant"}');
  }
  if (!Array.isArray(parsed)) throw new Error('must be a JSON list of {"issuer", "audience", "tenant"}');
  return parsed.map((entry: unknown) => {
    if (typeof entry !== 'object' || entry === null) throw new Error('must be a JSON list of objects');
    const { issuer, audience, tenant } = entry as Record<string, unknown>;
    if (typeof audience !== 'string' || audience.length === 0 || audience.length > 200) throw new Error('must give each issuer an audience (1-200 characters)');
    if (typeof tenant !== 'string' || !TENANT.test(tenant))
      throw new Error('must give each issuer a tenant (1-64 letters, digits, dots, dashes or underscores)');
    return { issuer: issuerUrl(issuer), audience, tenant };
  });
}

/** Every trusted issuer: OIDC_ISSUER (or the development provider's, in sandbox mode) and OIDC_ISSUERS. One tenant per issuer. */
export function trustedIssuers(
  config: { OIDC_ISSUER?: string; OIDC_AUDIENCE: string; OIDC_TENANT: string; OIDC_ISSUERS?: string },
  devIssuer?: string,
): TrustedIssuer[] {
  const first = config.OIDC_ISSUER ?? devIssuer;
  const all = [
    ...(first ? [{ issuer: first, audience: config.OIDC_AUDIENCE, tenant: config.OIDC_TENANT }] : []),
    ...(config.OIDC_ISSUERS ? readExtraIssuers(config.OIDC_ISSUERS) : []),
  ];
  const seen = new Set<string>();
  for (const { issuer } of all) {
    if (seen.has(issuer)) throw new Error(`The issuer ${issuer} is configured twice: each issuer belongs to one tenant`);
    seen.add(issuer);
  }
  return all;
}

const MIN_KEY_BYTES = 32;

function keyBytes(text: string): Buffer {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]+$/.test(trimmed) && trimmed.length % 2 === 0 ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (bytes.length < MIN_KEY_BYTES) throw new Error(`must hold at least ${MIN_KEY_BYTES} bytes (hex or base64)`);
  return bytes;
}

/** Text that can only be key material: hex, or base64 of a whole number of bytes. */
function isKeyText(text: string): boolean {
  return (/^[0-9a-fA-F]+$/.test(text) && text.length % 2 === 0) || (/^[A-Za-z0-9+/]+={0,2}$/.test(text) && text.length % 4 === 0);
}

/**
 * A secret given as itself or as the path of a file holding it. The key itself is hex, or base64
 * with no `/` in it or ending in its `=` padding (as `openssl rand -base64 32` prints); anything else
 * (a `/` anywhere, a `.`) is a path, and the file must exist: a path that does not is never taken
 * for the key itself (the key would change when the file appeared). Throws with a reason, never the value.
 */
function secretText(value: string): string {
  const trimmed = value.trim();
  return isKeyText(trimmed) && (trimmed.endsWith('=') || !trimmed.includes('/'))
    ? trimmed
    : fileText(trimmed, "a key given inline is hex, or base64 with no '/' or ending in '='");
}

/** The text of the file a secret variable names; a file that does not exist is named as such, with what an inline value would have been. */
function fileText(path: string, inline: string): string {
  if (!existsSync(path)) throw new Error(`names a file that does not exist (${inline})`);
  return readFileSync(path, 'utf8').trim();
}

/** END_USER_PSEUDONYM_KEY, SESSION_KEY: the key itself (hex or base64), or the path of a file holding it. Throws with a reason, never the key. */
export function readSecretKey(value: string): Buffer {
  return keyBytes(secretText(value));
}

/** A comma-separated list of secret keys (SESSION_PREVIOUS_KEYS), each as readSecretKey reads one. */
export function readSecretKeys(value: string): Buffer[] {
  const keys = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (keys.length === 0) throw new Error('holds no key');
  return keys.map(readSecretKey);
}

/** SESSION_PREVIOUS_KEYS, each narrowed to 32 bytes as SESSION_KEY is. */
export function loadPreviousSessionKeys(value: string | undefined): Buffer[] {
  return value ? readSecretKeys(value).map(sessionKeyOf) : [];
}

function sessionKeyOf(key: Buffer): Buffer {
  // AES-256-GCM takes 32 bytes: a longer key is narrowed with SHA-256.
  return key.length === 32 ? key : createHash('sha256').update(key).digest();
}

const MIN_METRICS_TOKEN_CHARS = 32;

/**
 * METRICS_TOKEN: the token itself, or the path of a file holding it: a value with a `/` in it is a
 * path unless it is base64 ending in its `=` padding (`openssl rand -base64 32`). Throws with a
 * reason, never the token.
 */
export function readMetricsToken(value: string): string {
  const trimmed = value.trim();
  const inline = !trimmed.includes('/') || (isKeyText(trimmed) && trimmed.endsWith('='));
  const token = inline ? trimmed : fileText(trimmed, "a token given inline has no '/', or is base64 ending in '='");
  if (token.length < MIN_METRICS_TOKEN_CHARS || /\s/.test(token)) {
    throw new Error(`must be at least ${MIN_METRICS_TOKEN_CHARS} characters with no spaces (openssl rand -base64 32)`);
  }
  return token;
}

/** Where the pseudonym key is kept when END_USER_PSEUDONYM_KEY is not set. */
export function defaultPseudonymKeyFile(dataDir: string): string {
  return join(dataDir, 'end-user-pseudonym.key');
}

/** The configured key, or the one under DATA_DIR (made now, readable by its owner only, when there is none). */
export function loadPseudonymKey(settings: { END_USER_PSEUDONYM_KEY?: string; DATA_DIR: string }): { key: Buffer; generated: boolean } {
  return loadKey(settings.END_USER_PSEUDONYM_KEY, defaultPseudonymKeyFile(settings.DATA_DIR));
}

/** SESSION_KEY, or DATA_DIR/session.key: what sessions' tokens are sealed with. */
export function loadSessionKey(settings: { SESSION_KEY?: string; DATA_DIR: string }): { key: Buffer; generated: boolean } {
  const { key, generated } = loadKey(settings.SESSION_KEY, join(settings.DATA_DIR, 'session.key'));
  return { key: sessionKeyOf(key), generated };
}

/** DATA_KEY, or DATA_DIR/data.key, and DATA_PREVIOUS_KEYS: what partners' data is sealed with at rest, each narrowed to 32 bytes. */
export function loadDataKeys(settings: { DATA_KEY?: string; DATA_PREVIOUS_KEYS?: string; DATA_DIR: string }): {
  key: Buffer;
  previous: Buffer[];
  generated: boolean;
} {
  const { key, generated } = loadKey(settings.DATA_KEY, join(settings.DATA_DIR, 'data.key'));
  const previous = settings.DATA_PREVIOUS_KEYS ? readSecretKeys(settings.DATA_PREVIOUS_KEYS).map(sessionKeyOf) : [];
  return { key: sessionKeyOf(key), previous, generated };
}

/** A key as configured (the key, or a file's path), or the one kept in `file`, made there at first use. */
function loadKey(configured: string | undefined, file: string): { key: Buffer; generated: boolean } {
  if (configured) return { key: readSecretKey(configured), generated: false };
  if (existsSync(file)) return { key: readSecretKey(file), generated: false };
  mkdirSync(dirname(file), { recursive: true });
  const key = randomBytes(MIN_KEY_BYTES);
  try {
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { key: readSecretKey(file), generated: false };
    throw error;
  }
  return { key, generated: true };
}

/** A private JSON Web Key, as OIDC_CLIENT_PRIVATE_KEY gives it. */
export type PrivateJwk = Record<string, unknown> & { d: string; alg: string; kid: string };

/** OIDC_CLIENT_PRIVATE_KEY: a private JWK with `alg` and `kid` (or a file's path holding one). Throws with a reason, never the key. */
export function readClientPrivateKey(value: string): PrivateJwk {
  const trimmed = value.trim();
  const text = !trimmed.startsWith('{') && existsSync(trimmed) ? readFileSync(trimmed, 'utf8') : trimmed;
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error('must be a private JWK (JSON) or the path of a file holding one');
  }
  if (typeof jwk !== 'object' || jwk === null || typeof jwk.d !== 'string') throw new Error('must be a private JWK (with its "d")');
  if (typeof jwk.alg !== 'string' || !/^(ES256|ES384|PS256|RS256|EdDSA)$/.test(jwk.alg))
    throw new Error('must name its alg: ES256, ES384, PS256, RS256 or EdDSA');
  if (typeof jwk.kid !== 'string' || jwk.kid.length === 0) throw new Error('must have a kid');
  return jwk as PrivateJwk;
}

/** How this service logs browsers in (docs/security.md, "Web apps"): its client at one OpenID provider. */
export interface SessionSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientAuth: { readonly secret: string } | { readonly privateJwk: PrivateJwk };
  /** The configured origin browsers use; undefined: http://127.0.0.1:<port listened on> (sandbox mode). */
  readonly publicBaseUrl?: string;
  /** Where a session's requests may come from, besides the public origin (CORS_ORIGINS); where a login may return to. */
  readonly allowedOrigins: readonly string[];
  readonly idleTimeoutSeconds: number;
  readonly absoluteTimeoutSeconds: number;
}

/**
 * The browser-session settings, or undefined when there are none: OIDC_CLIENT_ID at OIDC_ISSUER, or
 * in sandbox mode (`dev` given) the development provider's web client.
 */
export function sessionSettings(
  config: {
    OIDC_ISSUER?: string;
    OIDC_CLIENT_ID?: string;
    OIDC_CLIENT_SECRET?: string;
    OIDC_CLIENT_PRIVATE_KEY?: string;
    PUBLIC_BASE_URL?: string;
    SESSION_IDLE_TIMEOUT_SECONDS: number;
    SESSION_ABSOLUTE_TIMEOUT_SECONDS: number;
  },
  allowedOrigins: readonly string[],
  dev?: { issuer: string; clientId: string; secret: string },
): SessionSettings | undefined {
  const timeouts = { idleTimeoutSeconds: config.SESSION_IDLE_TIMEOUT_SECONDS, absoluteTimeoutSeconds: config.SESSION_ABSOLUTE_TIMEOUT_SECONDS };
  if (config.OIDC_CLIENT_ID) {
    if (!config.OIDC_ISSUER) throw new Error('OIDC_CLIENT_ID needs OIDC_ISSUER: the provider the client is registered at');
    const clientAuth = config.OIDC_CLIENT_PRIVATE_KEY
      ? { privateJwk: readClientPrivateKey(config.OIDC_CLIENT_PRIVATE_KEY) }
      : { secret: config.OIDC_CLIENT_SECRET ?? '' };
    return { issuer: config.OIDC_ISSUER, clientId: config.OIDC_CLIENT_ID, clientAuth, publicBaseUrl: config.PUBLIC_BASE_URL, allowedOrigins, ...timeouts };
  }
  if (!dev) return undefined;
  return { issuer: dev.issuer, clientId: dev.clientId, clientAuth: { secret: dev.secret }, publicBaseUrl: config.PUBLIC_BASE_URL, allowedOrigins, ...timeouts };
}
