import { Injectable } from '@nestjs/common';
import { endUserCaller, type AuthenticatedClient } from './api-client';
import { ApiClientsService } from './api-clients.service';
import { BrowserSessions } from './browser-sessions.service';
import { InvalidToken, TokenMissing } from './auth.errors';
import { AccessTokens } from './access-tokens.port';
import { Pseudonyms } from './pseudonyms';
import { StaffPolicy, staffMemberOf } from './staff';
import { ALL_TENANTS } from '../../common/domain/request-record';

/**
 * What a request presents to say who it is, as the HTTP layer read it:
 * - `token`: `Authorization: Bearer <token>` or `DPoP <token>`, with the DPoP header and what a proof must match;
 * - `password`: `Authorization: Basic`, whose password is a client token (what a browser prompts for on /docs);
 * - `session`: a web app's session cookie, its anti-forgery rules already met;
 * - `malformed`: an Authorization header that is none of these (`details` says which part is wrong).
 */
export type PresentedCredentials =
  | {
      readonly kind: 'token';
      readonly scheme: 'bearer' | 'dpop';
      readonly token: string;
      /** The `DPoP` header: undefined when absent, an array when sent more than once. */
      readonly dpop: string | string[] | undefined;
      readonly method: string;
      /** The request's URL without its query, on the canonical path, at the service's public origin. */
      readonly url: string;
    }
  | { readonly kind: 'password'; readonly token: string }
  | { readonly kind: 'session'; readonly cookie: string }
  | { readonly kind: 'malformed'; readonly details: string };

/** A JWS in compact form: three base64url parts. Client tokens never look like one. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Decides who is calling, for every kind of credential: partner servers and admins with client
 * tokens (server-side credentials, tenant-wide); the partner's end users with an access token from
 * the partner's OpenID provider (bearer, or bound to a key with DPoP), or with a web app's browser
 * session; the company's staff with an access token from the company's provider. An end user is
 * known by their pseudonym, never by their subject; a staff member by their id and name, with the
 * roles their groups grant. The edge's identify stage is its one caller.
 */
@Injectable()
export class Authenticator {
  constructor(
    private readonly clients: ApiClientsService,
    private readonly tokens: AccessTokens,
    private readonly pseudonyms: Pseudonyms,
    private readonly sessions: BrowserSessions,
    private readonly staffPolicy: StaffPolicy,
  ) {}

  /**
   * The caller the credentials belong to.
   * @throws InvalidToken, InvalidDpopProof, IssuerUnavailable, SessionEnded.
   */
  async authenticate(presented: PresentedCredentials): Promise<AuthenticatedClient> {
    switch (presented.kind) {
      case 'malformed':
        throw new TokenMissing(presented.details);
      case 'password':
        return this.clients.authenticate(presented.token);
      case 'session': {
        const { client, expiresAt, idleExpiresAt } = await this.sessions.authenticate(presented.cookie);
        return { ...client, session: { expiresAt, idleExpiresAt } };
      }
      case 'token':
        return this.byToken(presented);
    }
  }

  private async byToken(presented: Extract<PresentedCredentials, { kind: 'token' }>): Promise<AuthenticatedClient> {
    const { scheme, token } = presented;
    if (this.tokens.enabled && COMPACT_JWS.test(token)) {
      const holder = await this.tokens.verify(token, { scheme, proof: presented.dpop, method: presented.method, url: presented.url });
      if (holder.kind === 'staff') {
        const member = staffMemberOf(holder.claims, this.staffPolicy);
        return { id: member.id, name: member.name, role: 'staff', tenant: ALL_TENANTS, staff: { roles: member.roles, secondFactor: member.secondFactor } };
      }
      return endUserCaller(this.pseudonyms.of(holder.issuer, holder.subject), holder.tenant, holder.scopes, { subject: holder.subject });
    }
    // A client token is a bearer token: it is bound to no key.
    if (scheme === 'dpop') throw new InvalidToken({ scheme });
    try {
      return await this.clients.authenticate(token);
    } catch (error) {
      if (error instanceof InvalidToken) throw new InvalidToken({ scheme });
      throw error;
    }
  }
}
