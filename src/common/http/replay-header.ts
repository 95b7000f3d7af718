import type { FastifyReply } from 'fastify';

import { recordOf } from './request-context';

export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/**
 * Marks a response served from the idempotency store, on the wire (Idempotent-Replayed) and in the
 * request's audit record, and hands back its value.
 */
export function markReplayed<T>(reply: FastifyReply, result: { readonly value: T; readonly replayed: boolean }): T {
  if (result.replayed) {
    void reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    recordOf(reply.request.raw).noteReplayed();
  }
  return result.value;
}
