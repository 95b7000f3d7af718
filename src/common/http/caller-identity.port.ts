import type { FastifyRequest } from 'fastify';

/**
 * Who a request comes from, as far as its credentials say, for whatever must decide before the
 * route's own authentication (the rate limit counts per client, else per address). The auth
 * feature provides it; the answer is the one authentication itself then gives, looked up once.
 */
export abstract class CallerIdentity {
  /** The client's id when the request's token is valid; undefined otherwise (authentication will say why). */
  abstract clientIdOf(request: FastifyRequest): Promise<string | undefined>;
}
