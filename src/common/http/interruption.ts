import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../domain/domain-error';
import { ClientClosedRequest } from './edge.errors';
import { contextOf, Interruption } from './request-context';

/** The request was answered at the edge with this error (a timeout): its failure is to say the same. */
export function noteInterruption(raw: IncomingMessage, interruption: Interruption): void {
  contextOf(raw).interruption = interruption;
}

/**
 * What a failed request is answered with when the edge already knows: its connection timed out
 * (408, under the id the caller was shown), or its caller hung up before the request was whole
 * (499). Undefined for every other failure.
 */
export function interruptionOf(request: FastifyRequest, exception: unknown): Interruption | undefined {
  const noted = contextOf(request.raw).interruption;
  if (noted) return noted;
  if (exception instanceof DomainError) return undefined;
  const code = (exception as { code?: unknown } | null)?.code ?? (exception as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (request.raw.destroyed && !request.raw.complete)) {
    return { error: new ClientClosedRequest(), errorId: randomUUID() };
  }
  return undefined;
}
