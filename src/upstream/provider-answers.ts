import type { ErrorCode } from '../common/domain/error-codes';
import { ERROR_MESSAGES } from '../common/domain/error-messages';
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
  credentialsRefused: {
    provider: '401, 403',
    code: 'UPSTREAM.CREDENTIALS_REFUSED',
    message: ERROR_MESSAGES['UPSTREAM.CREDENTIALS_REFUSED'],
    outcome: 'rejected',
  },
  notFound: { provider: '404', code: 'UPSTREAM.NOT_FOUND', message: ERROR_MESSAGES['UPSTREAM.NOT_FOUND'], outcome: 'rejected' },
  conflict: {
    provider: '409',
    code: REFERENCE_ALREADY_SEEN,
    message: 'The provider refused the request: it has already seen this reference',
    outcome: 'rejected',
  },
  rateLimited: { provider: '429', code: 'UPSTREAM.RATE_LIMITED', message: ERROR_MESSAGES['UPSTREAM.RATE_LIMITED'], outcome: 'failed' },
  rejected: { provider: 'other 4xx', code: 'UPSTREAM.REJECTED', message: ERROR_MESSAGES['UPSTREAM.REJECTED'], outcome: 'rejected' },
  serverError: { provider: '5xx', code: 'UPSTREAM.SERVER_ERROR', message: ERROR_MESSAGES['UPSTREAM.SERVER_ERROR'], outcome: 'failed', whenPost: 'unknown' },
  timeout: { provider: 'timeout', code: 'UPSTREAM.TIMEOUT', message: ERROR_MESSAGES['UPSTREAM.TIMEOUT'], outcome: 'failed', whenPost: 'unknown' },
  unreachable: { provider: 'connection refused, DNS', code: 'UPSTREAM.UNREACHABLE', message: ERROR_MESSAGES['UPSTREAM.UNREACHABLE'], outcome: 'failed' },
  connectionLost: {
    provider: 'connection lost',
    code: 'UPSTREAM.CONNECTION_LOST',

    message: ERROR_MESSAGES['UPSTREAM.CONNECTION_LOST'],
    outcome: 'failed',
    whenPost: 'unknown',
  },
  circuitOpen: { provider: 'circuit open', code: 'UPSTREAM.CIRCUIT_OPEN', message: ERROR_MESSAGES['UPSTREAM.CIRCUIT_OPEN'], outcome: 'failed' },
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
