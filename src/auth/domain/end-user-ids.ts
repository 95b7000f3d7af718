import { DomainError, FieldProblem } from '../../common/domain/domain-error';
import { Pseudonyms } from './pseudonyms';

/** An issuer the service trusts, and the tenant whose end users its tokens name. */
export interface IssuerTenant {
  readonly issuer: string;
  readonly tenant: string;
}

/** The names of the request's fields, as a problem names them. */
export interface EndUserFieldNames {
  readonly subject: string;
  readonly issuer: string;
}

/**
 * An end user's pseudonym from their subject at an issuer, for support looking up their events or
 * a partner binding a customer to them. Never the subject itself: what the service stores.
 */
export class EndUserIds {
  private readonly issuers: readonly IssuerTenant[];

  constructor(
    issuers: readonly IssuerTenant[],
    private readonly pseudonyms: Pseudonyms,
  ) {
    this.issuers = issuers;
  }

  /**
   * The pseudonym of `subject` at `issuer`, which may be left out when the service trusts one issuer
   * (of `tenant`, when given). With `tenant`, only an issuer of that tenant is accepted: a tenant's
   * end users come from its own issuers, and no other tenant's.
   * @throws REQUEST.VALIDATION_FAILED when the issuer is not one the service trusts (for the tenant), or is needed, or `client` names another caller too.
   */
  pseudonymOf(subject: string, options: { issuer?: string; tenant?: string; client?: string; names?: EndUserFieldNames } = {}): string {
    const names = options.names ?? { subject: 'end_user', issuer: 'end_user_issuer' };
    const trusted = this.issuers.filter(({ tenant }) => options.tenant === undefined || tenant === options.tenant).map(({ issuer }) => issuer);
    const chosen = options.issuer ?? (trusted.length === 1 ? trusted[0] : undefined);
    const problems: FieldProblem[] = [];
    if (options.client !== undefined) problems.push({ field: 'client', message: 'give client or end_user, not both' });
    if (subject.length === 0) problems.push({ field: names.subject, message: `${names.subject} must not be empty` });
    if (chosen === undefined || !trusted.includes(chosen)) {
      problems.push({
        field: names.issuer,
        message:
          trusted.length === 0
            ? options.tenant === undefined || this.issuers.length === 0
              ? 'no OpenID provider is configured'
              : 'no OpenID provider is configured for this tenant'
            : `${names.issuer} must be one of ${trusted.join(', ')}`,
      });
    }
    if (problems.length > 0) throw new DomainError('REQUEST.VALIDATION_FAILED', { details: problems.map((p) => p.message).join('; '), fields: problems });
    return this.pseudonyms.of(chosen!, subject);
  }
}
