import { constants, createHash, createPublicKey, KeyObject, verify } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { requiredMembersOf, thumbprintOfMembers } from '../../common/crypto/jwk-thumbprint';
import { canonicalTarget } from '../../common/http/canonical-target';
import { DPOP_ALGORITHMS, InvalidDpopProof } from '../domain/auth.errors';
import { ProofReplay } from '../domain/proof-replay.port';

/** A proof far larger than any key and claims need is not worth parsing. */
const MAX_PROOF_LENGTH = 4096;
const MAX_JTI_LENGTH = 256;
/** Apps' keys remembered at once (a few hundred bytes each). */
const REMEMBERED_KEYS = 10_000;
/**
 * Proof headers remembered, in bytes: an app's header is the same text in each of its proofs, about
 * 200 characters for a P-256 key and 1,000 for RSA 4096 (a byte each, base64url). An entry also
 * holds its objects (about 400 bytes) and its imported key, whose OpenSSL memory lies outside the
 * JavaScript heap (about 2.4 KB for P-256, more for RSA): counted as HEADER_ENTRY_BYTES plus twice
 * the header's length. At most HEADERS_PER_KEY per key the tokens are bound to, so that a key whose
 * proofs vary their header cannot crowd out other apps' headers: each slot needs a token bound to
 * another key. Headers longer than MAX_REMEMBERED_HEADER are not remembered.
 */
const REMEMBERED_HEADER_BYTES = 8_000_000;
const HEADER_ENTRY_BYTES = 2_500;
const MAX_REMEMBERED_HEADER = 2048;
/** Two: an RSA key may sign one proof with RS256 and the next with PS256. */
const HEADERS_PER_KEY = 2;
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
  /** The access token's SHA-256, base64url: what the proof's `ath` must be (RFC 9449 section 4.2). */
  readonly accessTokenHash: string;
  /** The token's `cnf.jkt`: the thumbprint of the key the token is bound to (RFC 7638). */
  readonly jkt: string;
}

type DpopAlgorithm = (typeof DPOP_ALGORITHMS)[number];

/** The key each algorithm verifies with (RFC 7518 section 3, RFC 8037 section 3.1): its type, and its curve where it has one. */
const KEY_OF: Readonly<Record<DpopAlgorithm, { readonly kty: string; readonly crv?: string }>> = {
  ES256: { kty: 'EC', crv: 'P-256' },
  ES384: { kty: 'EC', crv: 'P-384' },
  PS256: { kty: 'RSA' },
  RS256: { kty: 'RSA' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
};

/** Whether a proof's `alg` is one the service accepts and fits the key it comes with. */
function fits(alg: unknown, key: Record<string, string>): alg is DpopAlgorithm {
  const expected = typeof alg === 'string' && (DPOP_ALGORITHMS as readonly string[]).includes(alg) ? KEY_OF[alg as DpopAlgorithm] : undefined;
  return expected !== undefined && key.kty === expected.kty && (expected.crv === undefined || key.crv === expected.crv);
}

/** A DER INTEGER of an unsigned big-endian number: no leading zero byte but one that keeps it positive. */
function derInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const positive = bytes[start] & 0x80 ? Buffer.of(0) : Buffer.alloc(0);
  const value = Buffer.concat([positive, bytes.subarray(start)]);
  return Buffer.concat([Buffer.of(0x02, value.length), value]);
}

/**
 * An ECDSA signature as a JWS carries it, R and S each the curve's size (RFC 7518 section 3.4), in
 * DER (RFC 3279 section 2.2.3), which node:crypto reads with the key alone. Asked for the JWS form
 * (`{ key, dsaEncoding: 'ieee-p1363' }`), Node 24 tells the options object from a key by catching
 * two thrown errors, a third of a proof's check (docs/benchmarks.md). For P-256 and P-384, the only
 * curves accepted, the sequence is under 128 bytes: its length is one byte.
 */
export function derOfJwsSignature(signature: Buffer): Buffer {
  const half = signature.length / 2;
  const body = Buffer.concat([derInteger(signature.subarray(0, half)), derInteger(signature.subarray(half))]);
  if (body.length > 127) throw new RangeError('An ECDSA signature of a curve the service does not accept');
  return Buffer.concat([Buffer.of(0x30, body.length), body]);
}

/**
 * How each algorithm checks a signature with node:crypto (RFC 7518 sections 3.3–3.5, RFC 8037
 * section 3.1): the key alone where its defaults are the algorithm's (ECDSA's signature made DER,
 * PKCS #1 v1.5 for an RSA key, which createPublicKey makes of any JWK with kty RSA), the key with
 * options only for RSA-PSS, which has no other way and so still pays Node's two thrown errors.
 */
const VERIFY_WITH: Readonly<
  Record<DpopAlgorithm, { readonly hash: string | null; readonly signatureBytes?: number; readonly options?: object; readonly asDer?: boolean }>
> = {
  ES256: { hash: 'sha256', signatureBytes: 64, asDer: true },
  ES384: { hash: 'sha384', signatureBytes: 96, asDer: true },
  PS256: { hash: 'sha256', options: { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } },
  RS256: { hash: 'sha256' },
  EdDSA: { hash: null, signatureBytes: 64 },
};

/** RSA keys shorter than this are refused (RFC 7518 section 3.3), as jose refuses them. */
const MIN_RSA_BITS = 2048;

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A compact JWS, taken apart once: its header as sent, its payload as a JSON object, what was signed, and the signature. */
interface CompactJws {
  readonly headerSegment: string;
  readonly payload: Record<string, unknown>;
  readonly signingInput: string;
  readonly signature: Buffer;
}

function jsonObjectOf(segment: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(Buffer.from(segment, 'base64url')));
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * RFC 7515 section 7.1: three base64url segments (no padding, no other character), the second a
 * UTF-8 JSON object. Undefined for anything else. The header, the first, is read by the caller
 * (`jsonObjectOf`) when it is not one already known.
 */
function parseCompact(proof: string): CompactJws | undefined {
  const first = proof.indexOf('.');
  const second = proof.indexOf('.', first + 1);
  if (first <= 0 || second <= first + 1 || second === proof.length - 1 || proof.indexOf('.', second + 1) !== -1) return undefined;
  const [h, p, s] = [proof.slice(0, first), proof.slice(first + 1, second), proof.slice(second + 1)];
  if (!BASE64URL.test(h) || !BASE64URL.test(p) || !BASE64URL.test(s)) return undefined;
  const payload = jsonObjectOf(p);
  if (!payload) return undefined;
  return { headerSegment: h, payload, signingInput: proof.slice(0, second), signature: Buffer.from(s, 'base64url') };
}

/** What a proof's header settles: the key it verifies with, and for which algorithm. */
interface HeaderKey {
  readonly key: KeyObject;
  readonly alg: DpopAlgorithm;
}

/** A header remembered: its exact text (a copy, not a slice that would keep its whole proof alive) and what it settles. */
interface KnownHeader extends HeaderKey {
  readonly segment: string;
}

/** A media type as `typ` compares it (RFC 7515 section 4.1.9): case-insensitive, `application/` optional. */
function typOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const lower = value.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

/** A NumericDate claim (RFC 7519 section 2): a finite number. */
const isNumericDate = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** A URL as a proof's `htu` is compared (RFC 9449 section 4.3: no query, no fragment; scheme and host normalised; the path as the router reads it). */
function comparable(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) return undefined;
  const target = canonicalTarget(parsed.pathname);
  if (target.refusal) return undefined;
  return `${parsed.protocol}//${parsed.host}${target.path}`;
}

/**
 * Checks DPoP proofs (RFC 9449 section 4.3): a `dpop+jwt` signed by the public key in its own
 * header, that key's thumbprint the token's `cnf.jkt`, `htm` and `htu` this request's, `iat` recent,
 * `ath` the token's hash, and `jti` never seen before on any replica.
 *
 * A proof is new on every request, so its cost is the request's: it is taken apart once (its header
 * read once, not once to find the key and again to verify), and its signature checked once, by
 * node:crypto (OpenSSL) with the key imported once per thumbprint. jose checks the access tokens;
 * it verifies through Web Crypto, whose asynchronous job per call doubled a proof's cost. What jose
 * would also refuse in a proof, this refuses too (the tests hold the two to the same answers).
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
  private readonly keys = new LRUCache<string, KeyObject>({ max: REMEMBERED_KEYS });

  /**
   * The headers of proofs that passed every check, by the token's `cnf.jkt` (the thumbprint of the
   * header's key, so shown), each with what it settles: an app sends the same header in every
   * proof, so its next proofs skip reading it, the key's thumbprint and the key's import. A proof
   * is a hit only when its header is the exact text remembered for its token's key; everything
   * else about it (its signature, every claim) is checked as before.
   */
  private readonly headers = new LRUCache<string, readonly KnownHeader[]>({
    maxSize: REMEMBERED_HEADER_BYTES,
    sizeCalculation: (known) => known.reduce((bytes, header) => bytes + HEADER_ENTRY_BYTES + 2 * header.segment.length, 0),
  });

  /**
   * The key in the proof's header, once its thumbprint is shown to be the token's `cnf.jkt`, for the
   * header's `alg` alone: one the service accepts that fits the key's type and curve (the key's own
   * `alg`, and any member the thumbprint does not cover, are not read). The header's key must be a
   * public one (RFC 9449 section 4.2): the thumbprint covers only the public members, so private
   * ones are looked for by name. `remember` is for once a proof has been verified with it.
   */
  private keyOf(header: Record<string, unknown>, jkt: string): HeaderKey & { remember: () => void } {
    // No extension is understood, so none may be critical (RFC 7515 section 4.1.11); b64 is one (RFC 7797).
    if (header.crit !== undefined || header.b64 !== undefined) throw notSigned();
    if (typOf(header.typ) !== 'dpop+jwt') throw notSigned();
    const jwk = header.jwk;
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw notSigned();
    if (PRIVATE_MEMBERS.some((member) => Object.hasOwn(jwk, member))) throw new InvalidDpopProof('The DPoP proof’s header carries a private key');
    const required = requiredMembersOf(jwk);
    if (required === undefined) throw notSigned();
    const thumbprint = thumbprintOfMembers(required);
    if (thumbprint !== jkt) throw new InvalidDpopProof('The DPoP proof is signed by another key than the one the token is bound to');
    const alg = header.alg;
    if (!fits(alg, required)) throw new InvalidDpopProof(`The DPoP proof’s alg must be one of ${DPOP_ALGORITHMS.join(', ')}, for a key of its type and curve`);

    const id = `${alg}:${thumbprint}`;
    const known = this.keys.get(id);
    if (known) return { key: known, alg, remember: nothing };
    let key: KeyObject;
    try {
      key = createPublicKey({ key: required, format: 'jwk' });
    } catch {
      throw notSigned();
    }
    if (key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) throw notSigned();
    return { key, alg, remember: () => this.keys.set(id, key) };
  }

  /**
   * The header's key: the one remembered for this exact header text and the token's key, else read
   * from the header (`keyOf`). `rememberKey` is for once the signature is verified; `rememberHeader`
   * for once the whole proof has passed.
   */
  private headerKeyOf(segment: string, jkt: string): HeaderKey & { rememberKey: () => void; rememberHeader: () => void } {
    const known = this.headers.get(jkt)?.find((header) => header.segment === segment);
    if (known) return { key: known.key, alg: known.alg, rememberKey: nothing, rememberHeader: nothing };
    const header = jsonObjectOf(segment);
    if (!header) throw notSigned();
    const { key, alg, remember } = this.keyOf(header, jkt);
    return {
      key,
      alg,
      rememberKey: remember,
      rememberHeader: () => {
        if (segment.length > MAX_REMEMBERED_HEADER) return;
        // A copy: `segment` is a slice of the proof, and would keep all of it alive.
        const copy = Buffer.from(segment, 'latin1').toString('latin1');
        const others = (this.headers.get(jkt) ?? []).filter((other) => other.segment !== segment);
        this.headers.set(jkt, [{ segment: copy, key, alg }, ...others].slice(0, HEADERS_PER_KEY));
      },
    };
  }

  async check(context: ProofContext): Promise<void> {
    const { proof } = context;
    if (proof === undefined) throw new InvalidDpopProof('A DPoP-bound token needs a DPoP header with a proof');
    if (typeof proof !== 'string') throw new InvalidDpopProof('Send exactly one DPoP header');
    if (proof.length > MAX_PROOF_LENGTH) throw new InvalidDpopProof('The DPoP proof is too long');

    const jws = parseCompact(proof);
    if (!jws) throw notSigned();
    const { payload } = jws;
    const { key, alg, rememberKey, rememberHeader } = this.headerKeyOf(jws.headerSegment, context.jkt);
    const how = VERIFY_WITH[alg];
    let valid: boolean;
    try {
      valid =
        (how.signatureBytes === undefined || jws.signature.length === how.signatureBytes) &&
        verify(
          how.hash,
          Buffer.from(jws.signingInput, 'ascii'),
          how.options ? { key, ...how.options } : key,
          how.asDer ? derOfJwsSignature(jws.signature) : jws.signature,
        );
    } catch {
      valid = false;
    }
    if (!valid) throw notSigned();
    // Signed by the key with this algorithm: worth remembering, whatever the claims say.
    rememberKey();

    const nowSeconds = Math.floor(this.now() / 1000);
    const skew = this.settings.clockSkewSeconds;
    const { jti, htm, htu, iat, exp, nbf } = payload;
    if (jti === undefined || htm === undefined || htu === undefined || iat === undefined) throw notSigned();
    if (!isNumericDate(iat) || (exp !== undefined && !isNumericDate(exp)) || (nbf !== undefined && !isNumericDate(nbf))) throw notSigned();
    if (exp !== undefined && exp <= nowSeconds - skew) throw notSigned();
    if (nbf !== undefined && nbf > nowSeconds + skew) throw notSigned();
    if (htm !== context.method) throw new InvalidDpopProof('The DPoP proof is for another HTTP method');
    const proofUrl = typeof htu === 'string' ? comparable(htu) : undefined;
    if (proofUrl === undefined || proofUrl !== comparable(context.url)) throw new InvalidDpopProof('The DPoP proof is for another URL');

    if (iat > nowSeconds + skew) throw new InvalidDpopProof('The DPoP proof is issued in the future');
    if (iat < nowSeconds - this.settings.maxAgeSeconds - skew) throw new InvalidDpopProof('The DPoP proof is too old');

    if (payload.ath !== context.accessTokenHash) throw new InvalidDpopProof('The DPoP proof is for another access token');

    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) throw new InvalidDpopProof('The DPoP proof has no usable jti');
    // Kept until the proof would be too old anyway; keyed per key, so no app can use up another's jti.
    const expiresAt = new Date((iat + this.settings.maxAgeSeconds + 2 * skew) * 1000);
    const seen = createHash('sha256').update(`${context.jkt}:${jti}`, 'utf8').digest('hex');
    if (!(await this.replay.useOnce(seen, expiresAt))) throw new InvalidDpopProof('The DPoP proof was already used');
    rememberHeader();
  }
}

/** What a hit remembers: nothing more (one function for all, not two closures per proof). */
function nothing(): void {}

function notSigned(): InvalidDpopProof {
  return new InvalidDpopProof('The DPoP proof is not a dpop+jwt signed by the public key in its header');
}
