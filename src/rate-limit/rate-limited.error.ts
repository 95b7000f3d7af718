import { DomainError } from '../common/domain/domain-error';

export class RateLimited extends DomainError {
  constructor(retryAfterSeconds: number, limit: number, per: 'client' | 'ip' | 'identity-provider', route?: string) {
    const whom = { client: 'caller', ip: 'source IP without valid credentials', 'identity-provider': 'OpenID provider address (back-channel logout)' }[per];
    super('RATE_LIMIT.EXCEEDED', {
      details: `At most ${limit} ${route ?? 'requests'} per minute per ${whom}`,
      retryAfterSeconds,
    });
  }
}
