import { Logger } from '@nestjs/common';
import { createLocalJWKSet, CryptoKey, errors, JSONWebKeySet, JWTVerifyGetKey } from 'jose';
import { IssuerUnavailable } from '../domain/auth.errors';

/** Asymmetric JWS algorithms: the only ones an access or logout token may be signed with (never `none`, never HMAC). */
const ASYMMETRIC = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']);

/**
 * How long an issuer's key is used after its JWKS was read: the JWKS is read again when older, and
 * no verification made with a key is remembered beyond it. So a key removed from the JWKS is refused
 * within ten minutes (docs/security.md, "End users", threat model).
 */
export const KEYS_TRUSTED_FOR_MS = 600_000;
/** How long a discovery document is trusted before it is read again. */
const METADATA_TTL_MS = 3_600_000;
/** How long a failed read (of a discovery document or a JWKS) is remembered, so a flood of tokens does not become a flood of fetches. */
const FAILURE_TTL_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** The one exception to TLS towards a provider: plain HTTP to a loopback address (the development provider, tests). */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

function tlsOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || isLoopbackHttp(url);
}

/** Whether an issuer failure is a timeout (the provider may answer later), rather than an answer that cannot be used. */
export function timedOut(error: unknown): boolean {
  let cause = error;
  for (let depth = 0; depth < 5 && typeof cause === 'object' && cause !== null; depth += 1) {
    if (cause instanceof errors.JWKSTimeout || (cause as { name?: unknown }).name === 'TimeoutError') return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** An issuer as its discovery document (OpenID Connect Discovery 1.0, section 3) describes it, checked. */
export interface IssuerMetadata {
  readonly issuer: string;
  /** The document as served: the relying party reads its endpoints. */
  readonly document: Readonly<Record<string, unknown>>;
  readonly jwksUri: URL;
  /** The algorithms the issuer advertises, asymmetric ones only; RS256 when it advertises none. */
  readonly algorithms: string[];
}

/** An issuer's keys, for one verification. */
export interface IssuerKeys {
  /** Finds the key a token names in the issuer's JWKS (IssuerUnavailable when the JWKS cannot be read). */
  readonly keys: JWTVerifyGetKey;
  readonly algorithms: string[];
  /** When the JWKS the key was found in was read (the directory's clock); undefined until `keys` has found one. */
  readonly readAt: () => number | undefined;
}

export interface IssuerDirectoryOptions {
  /** How soon after one read of a JWKS a token naming an unknown `kid` may cause another. */
  readonly refetchCooldownMs?: number;
  /** How long a fetch of a discovery document or a JWKS may take. */
  readonly fetchTimeoutMs?: number;
  readonly now?: () => number;
}

interface Snapshot {
  readonly find: ReturnType<typeof createLocalJWKSet>;
  /** When its fetch started: the JWKS is at least this recent. */
  readonly readAt: number;
}

/** One issuer's JWKS: read on first use, again when older than KEYS_TRUSTED_FOR_MS, and for an unknown `kid` after the cooldown; one read at a time. */
class IssuerJwks {
  private current?: Snapshot;
  private reading?: Promise<Snapshot>;
  private failure?: { readonly at: number; readonly cause: unknown };

  constructor(
    readonly uri: URL,
    private readonly issuer: string,
    private readonly options: Required<IssuerDirectoryOptions>,
    private readonly logger: Logger,
  ) {}

  async find(header: Parameters<JWTVerifyGetKey>[0], token: Parameters<JWTVerifyGetKey>[1]): Promise<{ key: CryptoKey; readAt: number }> {
    let snapshot = this.current;
    if (!snapshot || this.options.now() - snapshot.readAt >= KEYS_TRUSTED_FOR_MS) snapshot = await this.read();
    try {
      return { key: await snapshot.find(header, token), readAt: snapshot.readAt };
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      // A key the issuer has just rotated in; but a flood of made-up kids costs one read per cooldown.
      const latest = this.current ?? snapshot;
      if (latest === snapshot && this.options.now() - snapshot.readAt < this.options.refetchCooldownMs) throw error;
      const next = latest === snapshot ? await this.read() : latest;
      return { key: await next.find(header, token), readAt: next.readAt };
    }
  }

  private read(): Promise<Snapshot> {
    const startedAt = this.options.now();
    if (this.failure && startedAt - this.failure.at < FAILURE_TTL_MS) return Promise.reject(new IssuerUnavailable(this.failure.cause));
    this.reading ??= this.fetch(startedAt)
      .then(
        (snapshot) => {
          this.current = snapshot;
          this.failure = undefined;
          return snapshot;
        },
        (cause: unknown) => {
          this.failure = { at: startedAt, cause };
          this.logger.warn({ issuer: this.issuer, reason: describe(cause) }, 'The OpenID provider’s keys (JWKS) could not be read');
          throw cause;
        },
      )
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading.catch((cause: unknown) => {
      throw new IssuerUnavailable(cause);
    });
  }

  private async fetch(startedAt: number): Promise<Snapshot> {
    const response = await fetch(this.uri, {
      signal: AbortSignal.timeout(this.options.fetchTimeoutMs),
      redirect: 'error',
      headers: { accept: 'application/jwk-set+json, application/json' },
    });
    if (response.status !== 200) throw new Error(`The JWKS answered ${response.status}`);
    // Not JSON, or not a JWKS: the issuer's fault, as a timeout is (createLocalJWKSet throws JWKSInvalid).
    return { find: createLocalJWKSet((await response.json()) as JSONWebKeySet), readAt: startedAt };
  }
}

interface Entry {
  readonly at: number;
  readonly metadata: Promise<IssuerMetadata>;
  failed?: boolean;
  /** The last document read, kept for when a later read fails. */
  good?: IssuerMetadata;
}

/**
 * The issuers' discovery documents and keys, for both the access-token verifier and the relying
 * party: each issuer's document is read on first use (one fetch at a time), checked (its `issuer` is
 * the one configured; it and its keys on TLS unless on loopback), and read again hourly; its JWKS
 * has one cache, read again after KEYS_TRUSTED_FOR_MS and for an unknown `kid` after the cooldown,
 * so a key rotation needs no restart. A failed read is remembered for five seconds (IssuerUnavailable
 * meanwhile); a document that cannot be read again is used as last read until it can.
 */
export class IssuerDirectory {
  private readonly entries = new Map<string, Entry>();
  private readonly jwks = new Map<string, IssuerJwks>();
  private readonly options: Required<IssuerDirectoryOptions>;
  private readonly logger = new Logger('Issuers');

  constructor(options: IssuerDirectoryOptions = {}) {
    this.options = { refetchCooldownMs: 30_000, fetchTimeoutMs: FETCH_TIMEOUT_MS, now: Date.now, ...options };
  }

  /** The issuer's discovery document, checked. @throws IssuerUnavailable. */
  metadataOf(issuer: string): Promise<IssuerMetadata> {
    const now = this.options.now();
    const entry = this.entries.get(issuer);
    if (!entry || now - entry.at >= (entry.failed ? FAILURE_TTL_MS : METADATA_TTL_MS)) this.entries.set(issuer, this.discover(issuer, now, entry?.good));
    return this.entries.get(issuer)!.metadata.catch((cause: unknown) => {
      throw new IssuerUnavailable(cause);
    });
  }

  /** The issuer's keys and algorithms, for one verification. @throws IssuerUnavailable. */
  async keysOf(issuer: string): Promise<IssuerKeys> {
    const metadata = await this.metadataOf(issuer);
    let jwks = this.jwks.get(issuer);
    if (!jwks || jwks.uri.href !== metadata.jwksUri.href) {
      jwks = new IssuerJwks(metadata.jwksUri, issuer, this.options, this.logger);
      this.jwks.set(issuer, jwks);
    }
    const found = jwks;
    let readAt: number | undefined;
    return {
      keys: async (header, token) => {
        const { key, readAt: at } = await found.find(header, token);
        readAt = at;
        return key;
      },
      algorithms: metadata.algorithms,
      readAt: () => readAt,
    };
  }

  private discover(issuer: string, now: number, good: IssuerMetadata | undefined): Entry {
    const entry: Entry = {
      at: now,
      good,
      metadata: this.read(issuer).then(
        (metadata) => {
          entry.good = metadata;
          return metadata;
        },
        (cause: unknown) => {
          entry.failed = true;
          this.logger.warn({ issuer, reason: describe(cause), usingLastRead: good !== undefined }, 'The OpenID provider’s discovery failed');
          if (good) return good;
          throw cause;
        },
      ),
    };
    // A failure is answered to whoever waits; nobody waiting is not an unhandled rejection.
    entry.metadata.catch(() => undefined);
    return entry;
  }

  private async read(issuer: string): Promise<IssuerMetadata> {
    const server = URL.parse(issuer);
    if (!server || !tlsOrLoopback(server)) throw new Error('The issuer is not https');
    const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await fetch(url, { signal: AbortSignal.timeout(this.options.fetchTimeoutMs), redirect: 'error', headers: { accept: 'application/json' } });
    if (response.status !== 200) throw new Error(`The discovery document answered ${response.status}`);
    const document = await response.json();
    if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new Error('The discovery document is not a JSON object');
    const metadata = document as Record<string, unknown>;
    if (metadata.issuer !== issuer) throw new Error('The discovery document names another issuer');
    const jwksUri = typeof metadata.jwks_uri === 'string' ? URL.parse(metadata.jwks_uri) : null;
    if (!jwksUri) throw new Error('The discovery document has no jwks_uri');
    if (!tlsOrLoopback(jwksUri)) throw new Error('The jwks_uri is not https');
    const advertised = Array.isArray(metadata.id_token_signing_alg_values_supported) ? metadata.id_token_signing_alg_values_supported : [];
    const algorithms = advertised.filter((alg): alg is string => typeof alg === 'string' && ASYMMETRIC.has(alg));
    return { issuer, document: metadata, jwksUri, algorithms: algorithms.length > 0 ? algorithms : ['RS256'] };
  }
}

/** An error's kind and message, for the operator: the provider's answers hold no token. */
function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
