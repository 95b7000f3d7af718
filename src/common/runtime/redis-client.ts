import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';

/**
 * A Redis client for state the replicas share (rate-limit counters, used DPoP proofs): it fails a
 * command at once rather than queue it while Redis is away, and reconnects in the background.
 * Resolves once its first connection is up, or after a second: start-up goes on without Redis
 * then, and each user decides what a failed command means. ioredis is loaded only here, when a
 * Redis is configured: a service without one never loads it.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: 500,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
  });
  // Until its user listens: an unanswered 'error' event would end the process.
  redis.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 1000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return redis;
}

/**
 * What a store does while Redis is away: one warning a minute at most, whatever fails (the client's
 * own errors, each refused command), so that an outage is one line a minute, not one a request.
 * Listens to the client's errors from the start.
 */
export function warnWhileAway(redis: Redis, context: string, message: string): (error: Error) => void {
  const logger = new Logger(context);
  let last = 0;
  const warn = (error: Error) => {
    const now = Date.now();
    if (now - last < 60_000) return;
    last = now;
    logger.warn({ reason: error.message }, message);
  };
  redis.on('error', warn);
  return warn;
}
