import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** Every code an error envelope can carry (docs/errors.md). The 401 carries none. */
export type ErrorCode = components['schemas']['ErrorCode'];

/** An error answer's body: `error.code` says what went wrong; `error.id` is what support asks for. */
export type ErrorEnvelope = components['schemas']['ErrorEnvelopeSchema'];

/** The 401's body: the provider's envelope, word for word, with no code. */
export type UnauthenticatedEnvelope = components['schemas']['UnauthenticatedEnvelopeSchema'];

export type GatewayClient = Client<paths>;

export interface GatewayClientOptions {
  /** The gateway's origin, for example `https://gateway.example` (no path). */
  readonly baseUrl: string;
  /** A partner client token (`npm run clients -- create --role partner`); sent as a Bearer token. */
  readonly token: string;
  /** A fetch of your own (tests, proxies); the global one by default. */
  readonly fetch?: typeof globalThis.fetch;
}

/**
 * A client of the partner gateway whose paths, bodies, answers and error codes are the API's own
 * types, generated from its OpenAPI document. Each call resolves to `{ data, error, response }`:
 * `data` is the success envelope, `error` the error envelope, never both.
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  client.use({
    onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${options.token}`);
      return request;
    },
  });
  return client;
}

/**
 * The code of an error answer, to branch on; undefined for the 401 (recognise it by
 * `response.status`), which is the provider's envelope and has none.
 */
export function errorCodeOf<E extends { error: object }>(error: E): E extends { error: { code: infer C } } ? C : undefined;
export function errorCodeOf(error: { error: object }): ErrorCode | undefined {
  return 'code' in error.error ? (error.error.code as ErrorCode) : undefined;
}

/** Narrows an error answer to the ones with a code: every one but the 401. */
export function hasCode<E extends { error: object }>(error: E): error is Extract<E, { error: { code: unknown } }> {
  return 'code' in error.error;
}

/** Whether the gateway answered from its idempotency store: the same reference was sent before. */
export function wasReplayed(response: Response): boolean {
  return response.headers.get('idempotent-replayed') === 'true';
}
