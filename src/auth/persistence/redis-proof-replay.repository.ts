import { OnModuleDestroy } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { connectRedis, warnWhileAway } from '../../common/runtime/redis-client';
import { DatabaseUnavailable } from '../../database/store-errors';
import { ProofReplay } from '../domain/proof-replay.port';

/**
 * DPoP proofs used, in Redis, where DPOP_REPLAY_REDIS_URL names one: every replica sees every
 * other's. A first use is one `SET key 1 NX PXAT expiry`, atomic in Redis, so of any number of
 * requests presenting one proof at once on any replicas, exactly one is told it is new. It costs
 * Redis microseconds and the request one round trip, against an INSERT and a commit in PostgreSQL.
 *
 * What it gives up is durability: a Redis that restarts without its data forgets the proofs used
 * within the last DPOP_PROOF_MAX_AGE_SECONDS, which could then be replayed once each until their
 * window closes (docs/security.md, "DPoP"). When Redis does not answer, the request fails closed
 * (503, as when PostgreSQL does not answer); nothing is queued while it is away.
 */
export class RedisProofReplayRepository extends ProofReplay implements OnModuleDestroy {
  private readonly warn: (error: Error) => void;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'partner-gateway:dpop:',
  ) {
    super();
    this.warn = warnWhileAway(redis, 'DpopProofs', 'Redis does not answer: requests with DPoP proofs are refused until it does');
  }

  /** Once its first connection is up, or a second has passed (start-up goes on: requests with proofs fail closed until it answers). */
  static async connect(url: string): Promise<RedisProofReplayRepository> {
    return new RedisProofReplayRepository(await connectRedis(url));
  }

  async useOnce(key: string, expiresAt: Date): Promise<boolean> {
    let answer: string | null;
    try {
      answer = await this.redis.set(`${this.prefix}${key}`, '1', 'PXAT', expiresAt.getTime(), 'NX');
    } catch (error) {
      this.warn(error as Error);
      throw new DatabaseUnavailable(error);
    }
    return answer === 'OK';
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
