import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../domain/domain-error';
import { ClientClosedRequest } from './edge.errors';

/** How a request ended early at the edge: the error it was answered with, under this id. */
export interface Interruption {
  readonly error: DomainError;
  readonly errorId: string;
}

const interruptions = new WeakMap<IncomingMessage, Interruption>();

/** The request was answered at the edge with this error (a timeout): its failure is to say the same. */
export function noteInterruption(raw: IncomingMessage, interruption: Interruption): void {
  interruptions.set(raw, interruption);
}

/**
 * What a failed request is answered with when the edge already knows: its connection timed out
 * (408, under the id the caller was shown), or its caller hung up before the request was whole
 * (499). Undefined for every other failure.
 */
export function interruptionOf(request: FastifyRequest, exception: unknown): Interruption | undefined {
  const noted = interruptions.get(request.raw);
  if (noted) return noted;
  if (exception instanceof DomainError) return undefined;
  const code = (exception as { code?: unknown } | null)?.code ?? (exception as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (request.raw.destroyed && !request.raw.complete)) {
    return { error: new ClientClosedRequest(), errorId: randomUUID() };
  }
  return undefined;
}
