import type { FastifyReply, FastifyRequest } from 'fastify';

/** What a stage returns when it has sent the answer itself. */
export const ANSWERED = Symbol('answered');

/**
 * One named step of the edge, with what it does at each point of a request's life. A stage that
 * refuses a request throws (or rejects with) a DomainError: the stages after it do not run, and the
 * error filter answers, logs and audits it like any other failure.
 */
export interface EdgeStage {
  readonly name: string;
  /**
   * Before the body is read, in the pipeline's order. A stage that answers the request itself (a
   * redirect to a sign-in) sends its reply and returns ANSWERED: the stages after it do not run.
   */
  readonly onRequest?: (request: FastifyRequest, reply: FastifyReply) => void | typeof ANSWERED | Promise<void | typeof ANSWERED>;
  /**
   * When the answer is ready, before it is written (also for a caller that has gone): on the way out,
   * so in the reverse of the pipeline's order. A promise is waited for before the next stage's.
   */
  readonly onSend?: (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;
  /** When the answer has been written. */
  readonly onResponse?: (request: FastifyRequest, reply: FastifyReply) => void;
  /** When the caller hung up before its answer. */
  readonly onAbort?: (request: FastifyRequest) => void;
}
