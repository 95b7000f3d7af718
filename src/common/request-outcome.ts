import type { FastifyRequest } from 'fastify';

/** What the error filter decided about a request; read later by whoever records the request. */
export interface RequestOutcome {
  readonly errorId: string;
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

const OUTCOME = Symbol('request-outcome');

type WithOutcome = FastifyRequest & { [OUTCOME]?: RequestOutcome };

export function recordOutcome(request: FastifyRequest, outcome: RequestOutcome): void {
  (request as WithOutcome)[OUTCOME] = outcome;
}

export function outcomeOf(request: FastifyRequest): RequestOutcome | undefined {
  return (request as WithOutcome)[OUTCOME];
}
