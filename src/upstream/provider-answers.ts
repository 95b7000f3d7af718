import type { ErrorCode } from '../common/domain/error-codes';
import { REFERENCE_ALREADY_SEEN, UpstreamError, UpstreamFacts, UpstreamOutcome } from '../common/domain/upstream';

/**
 * How a provider answer reaches the partner, as data: the table in docs/decisions.md ("How provider
 * answers reach the partner"), which a test holds to this one. `outcome` is what the audit log and
 * idempotency act on; `whenPost` overrides it for a POST, which the provider may have acted on.
 */
export interface ProviderAnswer {
  /** The provider's side, as the docs table says it. */
  readonly provider: string;
  readonly code: ErrorCode;
  readonly message: string;
  readonly outcome: UpstreamOutcome;
  readonly whenPost?: UpstreamOutcome;
}

export const PROVIDER_ANSWERS = {
  badResponse: {
    provider: '2xx, body not JSON',
    code: 'UPSTREAM.BAD_RESPONSE',

    message: 'The provider answered with something that is not JSON',
    outcome: 'failed',
    whenPost: 'unknown',
  },
  incompleteResponse: {
    provider: '2xx, data missing',
    code: 'UPSTREAM.BAD_RESPONSE',

    message: 'The provider’s answer is missing data the gateway needs',
    outcome: 'failed',
    whenPost: 'unknown',
  },
  credentialsRefused: { provider: '401, 403', code: 'UPSTREAM.CREDENTIALS_REFUSED', message: 'The provider refused the request', outcome: 'rejected' },
  notFound: { provider: '404', code: 'UPSTREAM.NOT_FOUND', message: 'The provider has no such resource', outcome: 'rejected' },
  conflict: {
    provider: '409',
    code: REFERENCE_ALREADY_SEEN,
    message: 'The provider refused the request: it has already seen this reference',
    outcome: 'rejected',
  },
  rateLimited: { provider: '429', code: 'UPSTREAM.RATE_LIMITED', message: 'The provider is limiting requests; try again later', outcome: 'failed' },
  rejected: { provider: 'other 4xx', code: 'UPSTREAM.REJECTED', message: 'The provider refused the request', outcome: 'rejected' },
  serverError: { provider: '5xx', code: 'UPSTREAM.SERVER_ERROR', message: 'The provider failed to handle the request', outcome: 'failed', whenPost: 'unknown' },
  timeout: { provider: 'timeout', code: 'UPSTREAM.TIMEOUT', message: 'The provider did not answer in time', outcome: 'failed', whenPost: 'unknown' },
  unreachable: { provider: 'connection refused, DNS', code: 'UPSTREAM.UNREACHABLE', message: 'The provider could not be reached', outcome: 'failed' },
  connectionLost: {
    provider: 'connection lost',
    code: 'UPSTREAM.CONNECTION_LOST',

    message: 'The connection to the provider was lost',
    outcome: 'failed',
    whenPost: 'unknown',
  },
  circuitOpen: { provider: 'circuit open', code: 'UPSTREAM.CIRCUIT_OPEN', message: 'The provider is unavailable; try again later', outcome: 'failed' },
} as const satisfies Record<string, ProviderAnswer>;

export type ProviderAnswerName = keyof typeof PROVIDER_ANSWERS;
type Method = 'GET' | 'POST';

const RETRY_WITH_SAME_REFERENCE = 'The request may or may not have been processed; retry with the same reference to find out.';

/** `method` matters only for the rows whose outcome depends on it (`whenPost`). */
function errorFor(
  name: ProviderAnswerName,
  upstream: UpstreamFacts,
  extra: { details?: string; retryAfterSeconds?: number } = {},
  method?: Method,
): UpstreamError {
  const answer: ProviderAnswer = PROVIDER_ANSWERS[name];
  const outcome = method === 'POST' && answer.whenPost ? answer.whenPost : answer.outcome;
  return new UpstreamError({ code: answer.code, message: answer.message, outcome, upstream, ...extra });
}

/** The named constructors: one per row of the table. */
export const providerErrors = {
  badResponse: (method: Method, upstream: UpstreamFacts) => errorFor('badResponse', upstream, {}, method),
  incompleteResponse: (method: Method, upstream: UpstreamFacts, expected: string) =>
    errorFor('incompleteResponse', upstream, { details: `Expected ${expected} in the provider's answer.` }, method),
  credentialsRefused: (upstream: UpstreamFacts) =>
    errorFor('credentialsRefused', upstream, {
      details: 'The provider did not accept the gateway’s credentials; this is being looked into. Quote the error id to support.',
    }),
  notFound: (upstream: UpstreamFacts) => errorFor('notFound', upstream),
  conflict: (upstream: UpstreamFacts) => errorFor('conflict', upstream),
  rateLimited: (upstream: UpstreamFacts, retryAfterSeconds: number) => errorFor('rateLimited', upstream, { retryAfterSeconds }),
  rejected: (upstream: UpstreamFacts) =>
    errorFor('rejected', upstream, { details: `The provider answered ${upstream.status}. Quote the error id to support.` }),
  serverError: (method: Method, upstream: UpstreamFacts) =>
    errorFor('serverError', upstream, { details: `The provider answered ${upstream.status}. Quote the error id to support.` }, method),
  timeout: (method: Method, upstream: UpstreamFacts, timeoutMs: number) =>
    errorFor('timeout', upstream, { details: method === 'POST' ? RETRY_WITH_SAME_REFERENCE : `No answer within ${timeoutMs} ms.` }, method),
  unreachable: (upstream: UpstreamFacts) => errorFor('unreachable', upstream),
  connectionLost: (method: Method, upstream: UpstreamFacts) =>
    errorFor('connectionLost', upstream, { details: method === 'POST' ? RETRY_WITH_SAME_REFERENCE : undefined }, method),
  circuitOpen: (upstream: UpstreamFacts, retryAfterSeconds: number) =>
    errorFor('circuitOpen', upstream, { details: 'Recent calls to the provider failed, so the gateway is not calling it for a moment.', retryAfterSeconds }),
};
