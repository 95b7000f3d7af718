import { randomBytes } from 'node:crypto';
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

/** END_USER_PSEUDONYM_KEY: the key itself (hex or base64), or the path of a file holding it. Throws with a reason, never the key. */
export function readPseudonymKey(value: string): Buffer {
  const trimmed = value.trim();
  if (trimmed.includes('/') && existsSync(trimmed)) return keyBytes(readFileSync(trimmed, 'utf8'));
  return keyBytes(trimmed);
}

/** Where the pseudonym key is kept when END_USER_PSEUDONYM_KEY is not set. */
export function defaultPseudonymKeyFile(dataDir: string): string {
  return join(dataDir, 'end-user-pseudonym.key');
}

/** The configured key, or the one under DATA_DIR (made now, readable by its owner only, when there is none). */
export function loadPseudonymKey(settings: { END_USER_PSEUDONYM_KEY?: string; DATA_DIR: string }): { key: Buffer; generated: boolean } {
  if (settings.END_USER_PSEUDONYM_KEY) return { key: readPseudonymKey(settings.END_USER_PSEUDONYM_KEY), generated: false };
  const file = defaultPseudonymKeyFile(settings.DATA_DIR);
  if (existsSync(file)) return { key: readPseudonymKey(file), generated: false };
  mkdirSync(dirname(file), { recursive: true });
  const key = randomBytes(MIN_KEY_BYTES);
  try {
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { key: readPseudonymKey(file), generated: false };
    throw error;
  }
  return { key, generated: true };
}
