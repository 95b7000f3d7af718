import { createHash, createPublicKey, KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, errors, type JWK, type JWTHeaderParameters, type JWTPayload, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import { canonicalTarget } from '../../common/http/canonical-target';
import { DPOP_ALGORITHMS, InvalidDpopProof } from '../domain/auth.errors';
import { ProofReplay } from '../domain/proof-replay.port';

/** A proof far larger than any key and claims need is not worth parsing. */
const MAX_PROOF_LENGTH = 4096;
const MAX_JTI_LENGTH = 256;
/** Apps' keys remembered at once, each for one algorithm (a few hundred bytes, and its OpenSSL key). */
const REMEMBERED_KEYS = 10_000;
/**
 * Proof headers remembered, in bytes: an app sends the same header in every proof (about 200
 * characters for a P-256 key, 1,000 for RSA 4096), counted with its entry's objects
 * (HEADER_ENTRY_BYTES). At most HEADERS_PER_KEY per key the tokens are bound to, so that one key's
 * varied headers cannot crowd out other apps'; headers longer than MAX_REMEMBERED_HEADER are not
 * remembered.
 */
const REMEMBERED_HEADER_BYTES = 8_000_000;
const HEADER_ENTRY_BYTES = 500;
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

/** Whether a proof's `alg` (one jose allowed: DPOP_ALGORITHMS) fits the key it comes with. */
function fits(alg: string, key: JWK): boolean {
  const expected = KEY_OF[alg as DpopAlgorithm] as (typeof KEY_OF)[DpopAlgorithm] | undefined;
  return expected !== undefined && key.kty === expected.kty && (expected.crv === undefined || key.crv === expected.crv);
}

const isObject = (value: unknown): value is JWK => typeof value === 'object' && value !== null && !Array.isArray(value);

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

/** A key the header named, imported, and how to remember it once a proof has been verified with it. */
interface HeaderKey {
  readonly key: KeyObject;
  readonly remember: () => void;
}

/** A header that passed: its exact text (a copy, not a slice that would keep its proof alive), and the key it names, checked against the token's key. */
interface KnownHeader {
  readonly segment: string;
  readonly key: KeyObject;
}

/**
 * Checks DPoP proofs (RFC 9449 section 4.3) with jose's `jwtVerify`: a `dpop+jwt` (jose's `typ`
 * check), signed with one of DPOP_ALGORITHMS (jose's `algorithms`, which also refuses `none` and any
 * `crit` it does not understand) by the public key in its own header, that key's thumbprint the
 * token's `cnf.jkt` (jose's `calculateJwkThumbprint`), `exp` and `nbf` within the skew, `jti`,
 * `htm`, `htu` and `iat` present (jose's `requiredClaims`); then `htm` and `htu` this request's,
 * `iat` recent, `ath` the token's hash, and `jti` never seen before on any replica.
 *
 * The header's key is imported once per thumbprint and algorithm, as a KeyObject that jose takes
 * (and turns into its Web Crypto key once), and remembered only once a proof has been verified
 * with it: a forged proof that names an app's key with another algorithm imports nothing that
 * stays (docs/security.md, "DPoP", finding 1).
 */
export class DpopProofs {
  constructor(
    private readonly replay: ProofReplay,
    private readonly settings: ProofSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** The public keys tokens are bound to, by algorithm and thumbprint. */
  private readonly keys = new LRUCache<string, KeyObject>({ max: REMEMBERED_KEYS });

  /**
   * The headers of proofs that were verified, by the token's `cnf.jkt`: the next proof of a token
   * bound to that key, with that very header text, is handed the key its header was shown to name
   * (the thumbprint and the import are skipped; jose still parses the header, and checks the alg
   * and the signature, and every claim is checked as before).
   */
  private readonly headers = new LRUCache<string, readonly KnownHeader[]>({
    maxSize: REMEMBERED_HEADER_BYTES,
    sizeCalculation: (known) => known.reduce((bytes, header) => bytes + HEADER_ENTRY_BYTES + 2 * header.segment.length, 0),
  });

  /**
   * The key for this proof's header: remembered for its exact text and the token's key, else read
   * from it (keyOf). `remember` is for once the signature is verified (the key); `rememberHeader`
   * for once the whole proof has passed (its header).
   */
  private async headerKeyOf(header: JWTHeaderParameters, segment: string | undefined, jkt: string): Promise<HeaderKey & { rememberHeader: () => void }> {
    const known = segment === undefined ? undefined : this.headers.get(jkt)?.find((one) => one.segment === segment);
    if (known) return { key: known.key, remember: nothing, rememberHeader: nothing };
    const read = await this.keyOf(header, jkt);
    return {
      key: read.key,
      remember: read.remember,
      rememberHeader: () => {
        if (segment === undefined || segment.length > MAX_REMEMBERED_HEADER) return;
        const copy = Buffer.from(segment, 'latin1').toString('latin1');
        const others = (this.headers.get(jkt) ?? []).filter((other) => other.segment !== segment);
        this.headers.set(jkt, [{ segment: copy, key: read.key }, ...others].slice(0, HEADERS_PER_KEY));
      },
    };
  }

  /**
   * The key in the proof's header, once its thumbprint is shown to be the token's `cnf.jkt`, for the
   * header's `alg` alone (jose has allowed it), which must fit the key's type and curve (the key's
   * own `alg`, and any member the thumbprint does not cover, are not read). The header's key must
   * be a public one (RFC 9449 section 4.2): the thumbprint covers only the public members, so
   * private ones are looked for by name.
   */
  private async keyOf(header: JWTHeaderParameters, jkt: string): Promise<HeaderKey> {
    const jwk: unknown = header.jwk;
    if (!isObject(jwk)) throw notSigned();
    if (PRIVATE_MEMBERS.some((member) => Object.hasOwn(jwk, member))) throw new InvalidDpopProof('The DPoP proof’s header carries a private key');
    let thumbprint: string;
    try {
      thumbprint = await calculateJwkThumbprint(jwk, 'sha256');
    } catch {
      throw notSigned();
    }
    if (thumbprint !== jkt) throw new InvalidDpopProof('The DPoP proof is signed by another key than the one the token is bound to');
    if (!fits(header.alg, jwk)) throw algorithmRefused();

    const id = `${header.alg}:${thumbprint}`;
    const known = this.keys.get(id);
    if (known) return { key: known, remember: nothing };
    const { kty, crv, x, y, n, e } = jwk;
    let key: KeyObject;
    try {
      // The members the thumbprint covers, and no others.
      key = createPublicKey({ key: { kty, crv, x, y, n, e }, format: 'jwk' });
    } catch {
      throw notSigned();
    }
    return { key, remember: () => this.keys.set(id, key) };
  }

  async check(context: ProofContext): Promise<void> {
    const { proof } = context;
    if (proof === undefined) throw new InvalidDpopProof('A DPoP-bound token needs a DPoP header with a proof');
    if (typeof proof !== 'string') throw new InvalidDpopProof('Send exactly one DPoP header');
    if (proof.length > MAX_PROOF_LENGTH) throw new InvalidDpopProof('The DPoP proof is too long');

    const skew = this.settings.clockSkewSeconds;
    const found: { key?: HeaderKey & { rememberHeader: () => void } } = {};
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(
        proof,
        async (header, jws) => {
          found.key = await this.headerKeyOf(header, jws.protected, context.jkt);
          return found.key.key;
        },
        {
          typ: 'dpop+jwt',
          algorithms: [...DPOP_ALGORITHMS],
          requiredClaims: ['jti', 'htm', 'htu', 'iat'],
          clockTolerance: skew,
          currentDate: new Date(this.now()),
        },
      ));
    } catch (error) {
      if (error instanceof InvalidDpopProof) throw error;
      if (error instanceof errors.JOSEAlgNotAllowed) throw algorithmRefused();
      throw notSigned();
    }
    // Signed by the key with this algorithm: worth remembering, whatever the claims below say.
    found.key?.remember();

    const nowSeconds = Math.floor(this.now() / 1000);
    const { jti, htm, htu, iat } = payload;
    if (!isNumericDate(iat)) throw notSigned();
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
    found.key?.rememberHeader();
  }
}

/** A key already remembered needs no remembering. */
function nothing(): void {}

function notSigned(): InvalidDpopProof {
  return new InvalidDpopProof('The DPoP proof is not a dpop+jwt signed by the public key in its header');
}

function algorithmRefused(): InvalidDpopProof {
  return new InvalidDpopProof(`The DPoP proof’s alg must be one of ${DPOP_ALGORITHMS.join(', ')}, for a key of its type and curve`);
}
