import { Injectable } from '@nestjs/common';
import { DomainError, FieldProblem } from '../../common/domain/domain-error';
import { END_USER_NAME } from '../../common/domain/request-record';
import type { AuthenticatedClient } from './api-client';
import { ApiClientsService } from './api-clients.service';
import { BrowserSessions, SessionPresentation } from './browser-sessions.service';
import { InvalidClientToken } from './auth.errors';
import { EndUserTokens } from './end-user-tokens.port';
import { Pseudonyms } from './pseudonyms';

/** What a request presents to say who it is: its Authorization and DPoP headers, and what a proof must match. */
export interface PresentedCredentials {
  readonly authorization: string | string[] | undefined;
  readonly dpop: string | string[] | undefined;
  readonly method: string;
  /** The request's URL without its query, on the canonical path. */
  readonly url: string;
  /** The session cookie and what goes with it, when the request has one (a web app's browser session). */
  readonly session?: SessionPresentation;
}

/** `Bearer <token>` or `DPoP <token>`, scheme case-insensitive (RFC 9110 section 11.1); anything else is no token. */
const AUTHORIZATION = /^(Bearer|DPoP)[ ]+([^\s]+)[ ]*$/i;

/** The token an Authorization header presents, and under which scheme; undefined for none (another scheme, a header sent twice). */
export function presentedToken(header: string | string[] | undefined): { scheme: 'bearer' | 'dpop'; token: string } | undefined {
  const match = typeof header === 'string' ? AUTHORIZATION.exec(header) : null;
  if (!match) return undefined;
  return { scheme: match[1].toLowerCase() === 'dpop' ? 'dpop' : 'bearer', token: match[2] };
}
/** A JWS in compact form: three base64url parts. Client tokens never look like one. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Who is calling. Two kinds of caller present a token: partner servers and admins, with client
 * tokens (server-side credentials, tenant-wide); and the partner's end users, with an access token
 * from the partner's OpenID provider (bearer, or bound to a key with DPoP), who reach only their
 * own customers and only with the scopes their token grants. An end user is known by their
 * pseudonym, never by their subject.
 */
@Injectable()
export class Callers {
  constructor(
    private readonly clients: ApiClientsService,
    private readonly endUsers: EndUserTokens,
    private readonly pseudonyms: Pseudonyms,
    private readonly sessions: BrowserSessions,
  ) {}

  /**
   * An Authorization header decides; without one, a session cookie does (for a web app).
   * @throws InvalidClientToken, InvalidDpopProof, IssuerUnavailable, SessionEnded, CsrfRejected.
   */
  async authenticate(presented: PresentedCredentials): Promise<AuthenticatedClient> {
    const presentation = presentedToken(presented.authorization);
    if (!presentation) {
      if (presented.session && presented.authorization === undefined && this.sessions.enabled) {
        const { client, expiresAt, idleExpiresAt } = await this.sessions.authenticate(presented.session);
        return { ...client, session: { expiresAt, idleExpiresAt } };
      }
      return this.clients.authenticate(undefined);
    }
    const { scheme, token } = presentation;

    if (this.endUsers.enabled && COMPACT_JWS.test(token)) {
      const user = await this.endUsers.verify(token, { scheme, proof: presented.dpop, method: presented.method, url: presented.url });
      return { id: this.pseudonyms.of(user.issuer, user.subject), name: END_USER_NAME, role: 'end_user', tenant: user.tenant, scopes: user.scopes };
    }
    if (scheme === 'dpop') throw new InvalidClientToken({ scheme });
    try {
      return await this.clients.authenticate(token);
    } catch (error) {
      if (error instanceof InvalidClientToken) throw new InvalidClientToken({ scheme });
      throw error;
    }
  }

  /**
   * An end user's pseudonym, for support looking up their events or a partner binding a customer
   * to them: `issuer` may be left out when the service trusts one issuer.
   * @throws REQUEST.VALIDATION_FAILED when the issuer is not one the service trusts, or is needed, or `client` names another caller too.
   */
  endUserIdFor(subject: string, issuer?: string, client?: string, names = { subject: 'end_user', issuer: 'end_user_issuer' }): string {
    const trusted = this.endUsers.issuers;
    const chosen = issuer ?? (trusted.length === 1 ? trusted[0] : undefined);
    const problems: FieldProblem[] = [];
    if (client !== undefined) problems.push({ field: 'client', message: 'give client or end_user, not both' });
    if (subject.length === 0) problems.push({ field: names.subject, message: `${names.subject} must not be empty` });
    if (chosen === undefined || !trusted.includes(chosen)) {
      problems.push({
        field: names.issuer,
        message: trusted.length === 0 ? 'no OpenID provider is configured' : `${names.issuer} must be one of ${trusted.join(', ')}`,
      });
    }
    if (problems.length > 0) throw new DomainError('REQUEST.VALIDATION_FAILED', { details: problems.map((p) => p.message).join('; '), fields: problems });
    return this.pseudonyms.of(chosen!, subject);
  }
}
