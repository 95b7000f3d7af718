import type { FastifyRequest } from 'fastify';

export interface RecordedProblem {
  readonly errorId: string;
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

/**
 * Records how a request ended, before its answer is sent: the one way an answer reaches the audit
 * log. The answer (common/http/answer.ts) records a success, the error filter a failure; when recording
 * throws, the request is answered with what it threw instead (the audit log fails closed).
 */
export abstract class RequestRecorder {
  /** Resolves to the answer's receipt (the Audit-Receipt header) when it carries one. */
  abstract recordSuccess(request: FastifyRequest, status: number): Promise<string | undefined>;
  /** Resolves to the answer's receipt (the Audit-Receipt header) when it carries one. */
  abstract recordFailure(request: FastifyRequest, problem: RecordedProblem, exception: unknown): Promise<string | undefined>;
  /**
   * Where the caller's request log shows this request (`error.request_log_url`), once it is
   * recorded: a partner's or an end user's request to the API; undefined for any other.
   */
  abstract logAddressOf(request: FastifyRequest): string | undefined;
}

/**
 * A write's receipt (docs/security.md, "Receipts"): a compact JWS, signed with the audit key, over
 * the terminal event that recorded the answer.
 */
export const AUDIT_RECEIPT_HEADER = 'audit-receipt';

/** A partner's request log, and one request's timeline under it (`/api/v1/requests/{request_id}`). */
export const REQUEST_LOG_PATH = '/api/v1/requests';

/** The address of one request in its partner's log: a path, relative to the API's base URL. */
export function requestLogAddress(requestId: string): string {
  return `${REQUEST_LOG_PATH}/${encodeURIComponent(requestId)}`;
}
