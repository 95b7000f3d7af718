import { createHash } from 'node:crypto';
import { CryptoKey, decodeProtectedHeader, importJWK, JWK, jwtVerify, ProtectedHeaderParameters } from 'jose';
import { LRUCache } from 'lru-cache';
import { canonicalTarget } from '../../common/http/canonical-target';
import { DPOP_ALGORITHMS, InvalidDpopProof } from '../domain/auth.errors';
import { ProofReplay } from '../domain/proof-replay.port';

/** A proof far larger than any key and claims need is not worth parsing. */
const MAX_PROOF_LENGTH = 4096;
const MAX_JTI_LENGTH = 256;
/** Apps' keys remembered at once (a few hundred bytes each). */
const REMEMBERED_KEYS = 10_000;
/** A JWK's private members (RFC 7518 section 6): none may be in a proof's header. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export interface ProofSettings {
  /** How old a proof's `iat` may be. */
  readonly maxAgeSeconds: number;
  /** How far the apps' clocks may be off, either way. */
  readonly clockSkewSeconds: number;
}

/** What a proof must match: the request and the token it came with. */
export interface ProofContext {
  readonly proof: string | string[] | undefined;
  readonly method: string;
  readonly url: string;
  readonly accessToken: string;
  /** The token's `cnf.jkt`: the thumbprint of the key the token is bound to (RFC 7638). */
  readonly jkt: string;
}

/** The members of each key type a thumbprint covers (RFC 7638 section 3.2), in the order it takes them. */
const THUMBPRINT_MEMBERS: Readonly<Record<string, readonly string[]>> = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] };

type DpopAlgorithm = (typeof DPOP_ALGORITHMS)[number];

/** The key each algorithm verifies with (RFC 7518 section 3, RFC 8037 section 3.1): its type, and its curve where it has one. */
const KEY_OF: Readonly<Record<DpopAlgorithm, { readonly kty: string; readonly crv?: string }>> = {
  ES256: { kty: 'EC', crv: 'P-256' },
  ES384: { kty: 'EC', crv: 'P-384' },
  PS256: { kty: 'RSA' },
  RS256: { kty: 'RSA' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
};

/**
 * A public JWK's required members (RFC 7638 section 3.2), those and no others: what its thumbprint
 * covers, and all that is imported of it. Undefined for a key type or member that is not a string.
 */
function requiredMembersOf(jwk: JWK): Record<string, string> | undefined {
  const members = typeof jwk.kty === 'string' ? THUMBPRINT_MEMBERS[jwk.kty] : undefined;
  if (!members) return undefined;
  const required: Record<string, string> = {};
  for (const member of members) {
    const value = (jwk as Record<string, unknown>)[member];
    if (typeof value !== 'string') return undefined;
    required[member] = value;
  }
  return required;
}

function thumbprintOfMembers(required: Record<string, string>): string {
  return createHash('sha256').update(JSON.stringify(required), 'utf8').digest('base64url');
}

/**
 * A public JWK's SHA-256 thumbprint (RFC 7638), as jose's calculateJwkThumbprint computes it, with
 * node:crypto's hash: it runs on every request, and the Web Crypto digest costs ten times more.
 * Undefined for a key type or member that is not a string.
 */
export function thumbprintOf(jwk: JWK): string | undefined {
  const required = requiredMembersOf(jwk);
  return required && thumbprintOfMembers(required);
}

/** Whether a proof's `alg` is one the service accepts and fits the key it comes with. */
function fits(alg: unknown, key: Record<string, string>): alg is DpopAlgorithm {
  const expected = typeof alg === 'string' && (DPOP_ALGORITHMS as readonly string[]).includes(alg) ? KEY_OF[alg as DpopAlgorithm] : undefined;
  return expected !== undefined && key.kty === expected.kty && (expected.crv === undefined || key.crv === expected.crv);
}

/** A URL as a proof's `htu` is compared (RFC 9449 section 4.3: no query, no fragment; scheme and host normalised; the path as the router reads it). */
function comparable(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) return undefined;
  const target = canonicalTarget(parsed.pathname);
  if (target.refusal) return undefined;
  return `${parsed.protocol}//${parsed.host}${target.path}`;
}

/**
 * Checks DPoP proofs (RFC 9449 section 4.3) with jose: a `dpop+jwt` signed by the public key in its
 * own header, that key's thumbprint the token's `cnf.jkt`, `htm` and `htu` this request's, `iat`
 * recent, `ath` the token's hash, and `jti` never seen before on any replica.
 */
export class DpopProofs {
  constructor(
    private readonly replay: ProofReplay,
    private readonly settings: ProofSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The public keys tokens are bound to, imported once (by thumbprint and algorithm): importing a key
   * costs more than checking a signature. A key is remembered only once a proof has been verified
   * with it, and only for that algorithm.
   */
  private readonly keys = new LRUCache<string, CryptoKey>({ max: REMEMBERED_KEYS });

  /**
   * The key in the proof's header, once its thumbprint is shown to be the token's `cnf.jkt`, imported
   * for the header's `alg` alone: one the service accepts that fits the key's type and curve (the
   * key's own `alg`, and any member the thumbprint does not cover, are not read). The header's key
   * must be a public one (RFC 9449 section 4.2): the thumbprint covers only the public members, so
   * private ones are looked for by name. `remember` is for once a proof has been verified with it.
   */
  private async keyOf(proof: string, jkt: string): Promise<{ key: CryptoKey; alg: DpopAlgorithm; remember: () => void }> {
    const notSigned = () => new InvalidDpopProof('The DPoP proof is not a dpop+jwt signed by the public key in its header');
    let header: ProtectedHeaderParameters | undefined;
    try {
      header = decodeProtectedHeader(proof);
    } catch {
      // Refused below.
    }
    const jwk = header?.jwk;
    if (typeof jwk !== 'object' || jwk === null) throw notSigned();
    if (PRIVATE_MEMBERS.some((member) => member in jwk)) throw new InvalidDpopProof('The DPoP proof’s header carries a private key');
    const required = requiredMembersOf(jwk);
    if (required === undefined) throw notSigned();
    const thumbprint = thumbprintOfMembers(required);
    if (thumbprint !== jkt) throw new InvalidDpopProof('The DPoP proof is signed by another key than the one the token is bound to');
    const alg = header!.alg;
    if (!fits(alg, required)) throw new InvalidDpopProof(`The DPoP proof’s alg must be one of ${DPOP_ALGORITHMS.join(', ')}, for a key of its type and curve`);

    const id = `${alg}:${thumbprint}`;
    const known = this.keys.get(id);
    if (known) return { key: known, alg, remember: () => undefined };
    let key: CryptoKey;
    try {
      key = (await importJWK(required, alg)) as CryptoKey;
    } catch {
      throw notSigned();
    }
    return { key, alg, remember: () => this.keys.set(id, key) };
  }

  async check(context: ProofContext): Promise<void> {
    const { proof } = context;
    if (proof === undefined) throw new InvalidDpopProof('A DPoP-bound token needs a DPoP header with a proof');
    if (typeof proof !== 'string') throw new InvalidDpopProof('Send exactly one DPoP header');
    if (proof.length > MAX_PROOF_LENGTH) throw new InvalidDpopProof('The DPoP proof is too long');

    const { key, alg, remember } = await this.keyOf(proof, context.jkt);
    let verified: Awaited<ReturnType<typeof jwtVerify>>;
    try {
      verified = await jwtVerify(proof, key, { typ: 'dpop+jwt', algorithms: [alg], requiredClaims: ['jti', 'htm', 'htu', 'iat'] });
    } catch {
      throw new InvalidDpopProof('The DPoP proof is not a dpop+jwt signed by the public key in its header');
    }
    // Signed by the key with this algorithm: worth remembering, whatever the claims say.
    remember();
    const { payload } = verified;
    if (payload.htm !== context.method) throw new InvalidDpopProof('The DPoP proof is for another HTTP method');
    const htu = typeof payload.htu === 'string' ? comparable(payload.htu) : undefined;
    if (htu === undefined || htu !== comparable(context.url)) throw new InvalidDpopProof('The DPoP proof is for another URL');

    const nowSeconds = Math.floor(this.now() / 1000);
    const iat = payload.iat!;
    if (iat > nowSeconds + this.settings.clockSkewSeconds) throw new InvalidDpopProof('The DPoP proof is issued in the future');
    if (iat < nowSeconds - this.settings.maxAgeSeconds - this.settings.clockSkewSeconds) throw new InvalidDpopProof('The DPoP proof is too old');

    const ath = createHash('sha256').update(context.accessToken, 'ascii').digest('base64url');
    if (payload.ath !== ath) throw new InvalidDpopProof('The DPoP proof is for another access token');

    const jti = payload.jti!;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) throw new InvalidDpopProof('The DPoP proof has no usable jti');
    // Kept until the proof would be too old anyway; keyed per key, so no app can use up another's jti.
    const expiresAt = new Date((iat + this.settings.maxAgeSeconds + 2 * this.settings.clockSkewSeconds) * 1000);
    const seen = createHash('sha256').update(`${context.jkt}:${jti}`, 'utf8').digest('hex');
    if (!(await this.replay.useOnce(seen, expiresAt))) throw new InvalidDpopProof('The DPoP proof was already used');
  }
}
