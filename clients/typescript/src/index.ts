import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** Every code an error envelope can carry (docs/errors.md). */
export type ErrorCode = components['schemas']['ErrorCode'];

/** An error answer's body: `error.code` says what went wrong; `error.id` is what support asks for. */
export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];

export type GatewayClient = Client<paths>;

/** The current access token: a string, or a function returning it (called before every request, so a refreshed token is used at once). */
export type TokenProvider = string | (() => string | Promise<string>);

/** An elliptic-curve public key as a JWK (RFC 7517): what a DPoP proof's header carries. */
export interface PublicJwk {
  readonly kty: string;
  readonly crv?: string;
  readonly x?: string;
  readonly y?: string;
}

/**
 * Makes DPoP proofs (RFC 9449) with a key the app holds: the gateway then accepts the end user's
 * access token only from this app. `createDpopSigner()` makes one with a non-extractable key.
 */
export interface DpopSigner {
  /** The public key, as a JWK (what the OpenID provider binds the token to). */
  readonly publicJwk: PublicJwk;
  /** A proof for one request: its method, its URL (query and fragment are ignored), and the access token it carries. */
  proof(method: string, url: string, accessToken?: string): Promise<string>;
}

export interface GatewayClientOptions {
  /** The gateway's origin, for example `https://gateway.example` (no path). */
  readonly baseUrl: string;
  /**
   * Who is calling. In an app: the end user's access token from your OpenID provider (a function,
   * so that the client always sends the current one). On your servers: a partner client token
   * (`npm run clients -- create --role partner`), which never ships inside an app.
   */
  readonly token?: TokenProvider;
  /** Sends the token under the DPoP scheme with a fresh proof on every request (the token must be bound to this signer's key). */
  readonly dpop?: DpopSigner;
  /**
   * In a web app: no token at all. The gateway's browser session (an HttpOnly cookie it set at
   * login) authenticates each request; the client sends the cookie (`credentials: 'include'`) and
   * the anti-forgery header `X-CSRF: 1`. Give this or `token`.
   */
  readonly session?: true;
  /** A fetch of your own (tests, proxies); the global one by default. */
  readonly fetch?: typeof globalThis.fetch;
}

const base64url = (bytes: ArrayBuffer | Uint8Array): string => {
  let text = '';
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};
const encodeJson = (value: object): string => base64url(new TextEncoder().encode(JSON.stringify(value)));

/**
 * A DPoP signer (RFC 9449) with an ES256 key made by Web Crypto (browsers, React Native with a Web
 * Crypto polyfill, Node 18+). The private key is not extractable: keep the signer (or, in a
 * browser, store the CryptoKeyPair in IndexedDB) for as long as the token bound to it lives.
 */
export async function createDpopSigner(keys?: Awaited<ReturnType<typeof crypto.subtle.generateKey>>): Promise<DpopSigner> {
  const pair = (keys ?? (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']))) as {
    publicKey: Parameters<typeof crypto.subtle.exportKey>[1];
    privateKey: Parameters<typeof crypto.subtle.sign>[1];
  };
  const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  const publicJwk: PublicJwk = { kty: kty!, crv, x, y };
  return {
    publicJwk,
    async proof(method, url, accessToken) {
      const target = new URL(url);
      const claims: Record<string, unknown> = {
        htm: method.toUpperCase(),
        htu: `${target.origin}${target.pathname}`,
        iat: Math.floor(Date.now() / 1000),
        jti: crypto.randomUUID(),
      };
      if (accessToken !== undefined) {
        claims.ath = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accessToken)));
      }
      const input = `${encodeJson({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk })}.${encodeJson(claims)}`;
      const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, new TextEncoder().encode(input));
      return `${input}.${base64url(signature)}`;
    },
  };
}

/**
 * A client of the partner gateway whose paths, bodies, answers and error codes are the API's own
 * types, generated from its OpenAPI document. Each call resolves to `{ data, error, response }`:
 * `data` is the success envelope, `error` the error envelope, never both.
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const { token, dpop, session } = options;
  if ((token === undefined) === (session === undefined)) throw new Error('Give token (an app or a server) or session: true (a web app), not both');
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(session ? { credentials: 'include' as const } : {}),
  });
  client.use({
    async onRequest({ request }) {
      if (token === undefined) {
        request.headers.set('x-csrf', '1');
        return request;
      }
      const current = typeof token === 'string' ? token : await token();
      if (dpop) {
        request.headers.set('authorization', `DPoP ${current}`);
        request.headers.set('dpop', await dpop.proof(request.method, request.url, current));
      } else {
        request.headers.set('authorization', `Bearer ${current}`);
      }
      return request;
    },
  });
  return client;
}

/** The code of an error answer, to branch on (every error answer has one, the 401 too: `AUTH.TOKEN_MISSING`, `AUTH.INVALID_TOKEN`, …). */
export function errorCodeOf<E extends { error: object }>(error: E): E extends { error: { code: infer C } } ? C : undefined;
export function errorCodeOf(error: { error: object }): ErrorCode | undefined {
  return 'code' in error.error ? (error.error.code as ErrorCode) : undefined;
}

/** Narrows an error answer to the ones with a code (every error answer the gateway gives). */
export function hasCode<E extends { error: object }>(error: E): error is Extract<E, { error: { code: unknown } }> {
  return 'code' in error.error;
}

/** Whether the gateway answered from its idempotency store: the same reference was sent before. */
export function wasReplayed(response: Response): boolean {
  return response.headers.get('idempotent-replayed') === 'true';
}

/** What `listRequests` filters a partner's request log by: time range, status or status class, operation, error code, error id, reference, customer, a page. */
export type RequestLogFilters = NonNullable<operations['listRequests']['parameters']['query']>;

/** A request as its partner's log lists it. */
export type LoggedRequest = components['schemas']['RequestLogEntry'];

/** One request's timeline: its events, each provider attempt, the request a replay gave back, what settled an unknown outcome. */
export type RequestTimeline = components['schemas']['RequestTimeline'];

/** Your requests, newest first (a partner's server token): pass the answer's `next_cursor` as `cursor` for the next page. */
export function listRequests(client: GatewayClient, filters: RequestLogFilters = {}) {
  return client.GET('/api/v1/requests', { params: { query: filters } });
}

/** One of your requests, by its id (its `X-Request-Id`, or the end of an error's `request_log_url`). */
export function getRequest(client: GatewayClient, requestId: string) {
  return client.GET('/api/v1/requests/{request_id}', { params: { path: { request_id: requestId } } });
}

/** The request id an error answer's `request_log_url` names: pass it to getRequest. Undefined when the error has no log address. */
export function requestIdOf(error: { error: object }): string | undefined {
  const address = 'request_log_url' in error.error ? error.error.request_log_url : undefined;
  return typeof address === 'string' ? decodeURIComponent(address.slice(address.lastIndexOf('/') + 1)) : undefined;
}

/** A customer as the gateway reads it back: reference, created, end user, country, its accounts' ids. */
export type Customer = components['schemas']['CustomerDetails'];

/** A bank account as one read shows it: its identifiers (IBAN, or sort code and account number) in full. */
export type BankAccount = components['schemas']['BankAccount'];

/** A bank account as a list shows it: its identifiers masked to `last4`. */
export type BankAccountSummary = components['schemas']['BankAccountSummary'];

/** What `eachCustomer` filters by: the created range, a page size. */
export type CustomerFilters = Omit<NonNullable<operations['listCustomers']['parameters']['query']>, 'cursor'>;

/** What `eachBankAccount` filters by: customer, currency, the created range, a page size. */
export type BankAccountFilters = Omit<NonNullable<operations['listBankAccounts']['parameters']['query']>, 'cursor'>;

/** An error answer of a list, thrown by the iterators below: its `error` is the envelope's (code, id, message). */
export class GatewayListError extends Error {
  constructor(readonly error: ErrorEnvelope['error'] | null) {
    super(`${error?.code ?? 'error'}: ${error?.message ?? ''} (error id ${error?.id ?? 'none'})`);
    this.name = 'GatewayListError';
  }
}

/** Every page of a list, following `next_cursor` until it is null; an error answer is thrown as GatewayListError. */
async function* everyPage<T>(read: (cursor: string | undefined) => Promise<{ data?: { data: T & { next_cursor: string | null } }; error?: unknown }>) {
  let cursor: string | undefined;
  do {
    const { data, error } = await read(cursor);
    if (!data) throw new GatewayListError((error as ErrorEnvelope | undefined)?.error ?? null);
    yield data.data;
    cursor = data.data.next_cursor ?? undefined;
  } while (cursor);
}

/** Your customers (an end user: their own), newest first, every page: `for await (const customer of eachCustomer(api)) …`. */
export async function* eachCustomer(client: GatewayClient, filters: CustomerFilters = {}): AsyncGenerator<Customer> {
  for await (const page of everyPage((cursor) => client.GET('/api/v1/customers', { params: { query: { ...filters, cursor } } }))) yield* page.customers;
}

/** Your bank accounts (an end user: their own customers'), newest first, every page, identifiers masked; getBankAccount reads one in full. */
export async function* eachBankAccount(client: GatewayClient, filters: BankAccountFilters = {}): AsyncGenerator<BankAccountSummary> {
  for await (const page of everyPage((cursor) => client.GET('/api/v1/bank-accounts', { params: { query: { ...filters, cursor } } }))) yield* page.bank_accounts;
}

/** One of your bank accounts, its identifiers in full. */
export function getBankAccount(client: GatewayClient, id: string) {
  return client.GET('/api/v1/bank-accounts/{id}', { params: { path: { id } } });
}

export {
  type AuditKeySet,
  type ConsistencyProof,
  type InclusionProof,
  type ReceiptClaims,
  type ReceiptFailure,
  ReceiptVerificationError,
  type SignedCheckpoint,
  verifyConsistency,
  verifyInclusion,
  verifyReceipt,
} from './receipts.js';

export { type EventData, type EventType, type GatewayEvent, type WebhookVerification, verifyWebhook, WebhookVerificationError } from './webhooks.js';
