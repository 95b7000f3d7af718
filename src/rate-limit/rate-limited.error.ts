import { DomainError } from '../common/domain/domain-error';

export class RateLimited extends DomainError {
  constructor(retryAfterSeconds: number, limit: number, per: 'client' | 'ip') {
    super('RATE_LIMIT.EXCEEDED', {
      details: `At most ${limit} requests per minute per ${per === 'client' ? 'client token' : 'source IP without a valid client token'}`,
      retryAfterSeconds,
    });
  }
}
