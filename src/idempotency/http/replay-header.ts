import type { FastifyReply } from 'fastify';
import { Idempotent } from '../domain/idempotency.service';

export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** Marks a replayed response and hands back its value. */
export function replyWith<T>(reply: FastifyReply, result: Idempotent<T>): T {
  if (result.replayed) void reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
  return result.value;
}
