import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain/domain-error';
import { RateLimitStore } from './rate-limit-store.port';
import { RateLimited } from './rate-limited.error';
import { RateLimits } from './rate-limiter';

/** Addresses remembered as over their budget at once, at most (the oldest are forgotten first). */
const REMEMBERED_ADDRESSES = 10_000;

/**
 * How many refused credentials an address may present per minute (RATE_LIMIT_PER_IP_PER_MINUTE),
 * wherever it presents them, before its credentials on the admin paths (/docs, /metrics,
 * /health/details) are no longer looked up: past it, each such request is answered 429 at once,
 * for the rest of the window, with no database read. Looking a guessed token up is the one thing
 * an anonymous caller can make the database do, and those paths have no other limit. (The API's
 * own per-address limit answers anonymous calls; a valid client there counts on its own.)
 */
@Injectable()
export class RefusalBudget {
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly store: RateLimitStore,
    private readonly limits: RateLimits,
  ) {}

  /** The refusal to give at once, without a lookup, when `ip` has used its budget. */
  exhausted(ip: string, now = Date.now()): DomainError | undefined {
    const until = this.blockedUntil.get(ip);
    if (until === undefined) return undefined;
    if (until <= now) {
      this.blockedUntil.delete(ip);
      return undefined;
    }
    return new RateLimited(Math.ceil((until - now) / 1000), this.limits.perIp, 'ip');
  }

  /** Counts a refused credential from `ip` (across replicas when the counters are shared). */
  async refused(ip: string, now = Date.now()): Promise<void> {
    const count = await this.store.increment(`refused:${ip}`, this.limits.ttlMs, this.limits.perIp, this.limits.ttlMs);
    // The budget is spent with its last refusal: the next credential from there is not looked up.
    if (!count.isBlocked && count.totalHits < this.limits.perIp) return;
    if (this.blockedUntil.size >= REMEMBERED_ADDRESSES && !this.blockedUntil.has(ip)) this.blockedUntil.delete(this.blockedUntil.keys().next().value!);
    this.blockedUntil.set(ip, now + Math.max(1, count.isBlocked ? count.timeToBlockExpire : count.timeToExpire) * 1000);
  }
}
