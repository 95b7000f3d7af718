import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerGuard } from '@nestjs/throttler';
import type { ThrottlerLimitDetail, ThrottlerModuleOptions, ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { ApiClientsService } from '../auth/domain/api-clients.service';
import { authenticationOf } from '../auth/http/bearer-auth.guard';
import { RateLimited } from './rate-limited.error';

/** The limits, per minute, as configured (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_PER_IP_PER_MINUTE). */
export abstract class RateLimits {
  abstract readonly name: string;
  abstract readonly ttlMs: number;
  abstract readonly perClient: number;
  abstract readonly perIp: number;
}

export interface Tracker {
  readonly key: string;
  readonly per: 'client' | 'ip';
}

/**
 * Whom a request counts against: its client when the token is valid, else its source IP (so
 * guessing tokens is limited too). The token is looked up once per request (authenticationOf
 * keeps the answer), and the authentication guard reuses it.
 */
export function trackerOf(request: FastifyRequest, clients: ApiClientsService): Promise<Tracker> {
  return authenticationOf(request, clients).then(
    (client): Tracker => ({ key: `client:${client.id}`, per: 'client' }),
    // No token, a bad one, or the token store is down: authentication will say which.
    (): Tracker => ({ key: `ip:${request.ip}`, per: 'ip' }),
  );
}

/**
 * @nestjs/throttler's guard, counting per client or per IP across every route, and answering
 * over the limit with the envelope's 429 and Retry-After. Runs before authentication.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    @Inject(ApiClientsService) private readonly clients: ApiClientsService,
    @Inject(RateLimits) private readonly limits: RateLimits,
  ) {
    super(options, storage, reflector);
  }

  /**
   * A request that matches no route never reaches the guards, yet it is answered (404) and, under
   * /api/v1, audited: it counts against the same limits and counter as any other, so that nobody
   * can fill the audit log with unknown routes. Called from an onRequest hook.
   * @throws RateLimited over the limit.
   */
  async limitUnmatched(request: FastifyRequest): Promise<void> {
    const tracker = await trackerOf(request, this.clients);
    const limit = tracker.per === 'client' ? this.limits.perClient : this.limits.perIp;
    const name = this.limits.name;
    const { isBlocked, timeToBlockExpire } = await this.storageService.increment(`${name}:${tracker.key}`, this.limits.ttlMs, limit, this.limits.ttlMs, name);
    if (isBlocked) throw new RateLimited(timeToBlockExpire, limit, tracker.per);
  }

  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    return (await trackerOf(request as unknown as FastifyRequest, this.clients)).key;
  }

  /** One counter per tracker across every route (the default would count per route). */
  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `${name}:${tracker}`;
  }

  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const tracker = await trackerOf(context.switchToHttp().getRequest<FastifyRequest>(), this.clients);
    throw new RateLimited(detail.timeToBlockExpire, detail.limit, tracker.per);
  }
}
