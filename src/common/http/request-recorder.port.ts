import type { FastifyRequest } from 'fastify';

export interface RecordedProblem {
  readonly errorId: string;
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

/**
 * Records how a request ended, before its answer is sent: the one way an answer reaches the audit
 * log. The answer interceptor records a success, the error filter a failure; when recording
 * throws, the request is answered with what it threw instead (the audit log fails closed).
 */
export abstract class RequestRecorder {
  abstract recordSuccess(request: FastifyRequest, status: number): Promise<void>;
  abstract recordFailure(request: FastifyRequest, problem: RecordedProblem, exception: unknown): Promise<void>;
}
