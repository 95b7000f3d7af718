import type { FastifyRequest } from 'fastify';

export interface RecordedProblem {
  readonly errorId: string;
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

/**
 * Records how a failed request ended, before the error response is sent. The error filter calls it;
 * when it throws, the filter answers with what it threw instead (the audit log fails closed).
 */
export abstract class RequestRecorder {
  abstract recordFailure(request: FastifyRequest, problem: RecordedProblem, exception: unknown): Promise<void>;
}
