import type { FastifyRequest } from 'fastify';
import { DomainError } from '../../common/domain/domain-error';

import type { EdgeStage } from '../../common/http/edge-stage';
import { statusOfCode } from '../../common/http/error-envelope.filter';
import { contextOf, CredentialKind, Identification, targetOf } from '../../common/http/request-context';
import { SPAN_ATTRIBUTES, traced } from '../../common/telemetry/tracing';
import { Authenticator, PresentedCredentials } from '../domain/authenticator';
import type { AuthenticatedClient } from '../domain/api-client';
import { SESSION_PATHS } from '../domain/session-endpoints';
import { CredentialRules, credentialsOf } from './presented-credentials';

const NOBODY: Identification = {};
const IDENTITY_PROVIDER: Identification = { fromIdentityProvider: true };

/**
 * The session's own endpoints, which identify nobody from a request's credentials: a login and its
 * callback are navigations (no anti-forgery header), logout needs only the cookie (never the
 * OpenID provider), and the back-channel logout is the provider's, proven by its signed token.
 */
const SESSION_ENDPOINTS: ReadonlySet<string> = new Set([SESSION_PATHS.login, SESSION_PATHS.callback, SESSION_PATHS.logout]);

/**
 * The refusals an address has left (the rate-limit feature's RefusalBudget): every refused
 * credential counts, and past the budget what the address presents where `applies` says is not
 * looked up at all (the admin paths, which no other limit covers; on the API a valid client from
 * that address is still served, and the per-address limit answers its anonymous calls).
 */
export interface RefusedCredentialsBudget {
  /** The refusal to give at once, without a lookup, when the address has used its budget. */
  exhausted(ip: string): DomainError | undefined;
  /** Counts a refused credential from the address. */
  refused(ip: string): Promise<void>;
  /** Where a spent budget refuses before the lookup. */
  applies(request: FastifyRequest): boolean;
}

function kindOf(presented: PresentedCredentials): CredentialKind | undefined {
  switch (presented.kind) {
    case 'token':
      return presented.scheme;
    case 'password':
      return 'basic';
    case 'session':
      return 'session';
    case 'malformed':
      return undefined;
  }
}

/**
 * The identify stage: who is calling, decided once for every request, and kept in its context (the
 * caller, or why its credentials were refused). It never refuses a request itself: the rate limit
 * counts by what it found, the admin paths and the routes' access check raise its refusal where a
 * caller is needed, and a public route goes on. An answer to a request that presented credentials
 * is never stored by a shared cache (RFC 9111 keeps answers to Authorization requests from them,
 * but not answers to cookie ones).
 */
export function identifyStage(
  authenticator: Authenticator,
  rules: CredentialRules,
  /** Whether a caller can matter to this request (its route counts against the limits, or needs an admin): no credential of any other is read. */
  mayNeedCaller: (request: FastifyRequest) => boolean,
  budget?: RefusedCredentialsBudget,
  /** Told of every caller accepted, with the request (the break-glass count). */
  accepted?: (caller: AuthenticatedClient, request: FastifyRequest) => void,
): EdgeStage {
  return {
    name: 'identify',
    onRequest: (request, reply) => {
      const context = contextOf(request.raw);
      const path = targetOf(request.raw).path;
      // A probe or a static page is nobody's: no credential is looked up for it, so none costs a database read there.
      if (!mayNeedCaller(request)) {
        context.identity = NOBODY;
        return undefined;
      }
      if (path === SESSION_PATHS.backchannelLogout && request.method === 'POST') {
        context.identity = IDENTITY_PROVIDER;
        return undefined;
      }
      if (SESSION_ENDPOINTS.has(path)) {
        context.identity = NOBODY;
        return undefined;
      }
      let presented: PresentedCredentials | undefined;
      try {
        presented = credentialsOf(request, rules);
      } catch (refusal) {
        void reply.header('cache-control', 'no-store');
        context.identity = { refusal: refusal as DomainError, presentedAs: 'session' };
        return undefined;
      }
      if (presented === undefined) {
        context.identity = NOBODY;
        return undefined;
      }
      void reply.header('cache-control', 'no-store');
      // An address that has presented too many refused credentials gets no more lookups there this window.
      const exhausted = budget?.applies(request) ? budget.exhausted(request.ip) : undefined;
      if (exhausted) {
        context.identity = { refusal: exhausted, presentedAs: kindOf(presented) };
        return undefined;
      }
      return identify(request, authenticator, presented, budget, accepted);
    },
  };
}

async function identify(
  request: FastifyRequest,
  authenticator: Authenticator,
  presented: PresentedCredentials,
  budget?: RefusedCredentialsBudget,
  accepted?: (caller: AuthenticatedClient, request: FastifyRequest) => void,
): Promise<void> {
  const context = contextOf(request.raw);
  const presentedAs = kindOf(presented);
  try {
    const caller = await traced('gateway.authenticate', { [SPAN_ATTRIBUTES.operation]: 'authenticate' }, () => authenticator.authenticate(presented), {
      failed: (error) => (error instanceof DomainError && statusOfCode(error.code) < 500 ? 'refused' : 'failed'),
    });
    context.record.noteClient(caller);
    context.identity = { caller, presentedAs };
    accepted?.(caller, request);
  } catch (refusal) {
    // Kept, not thrown: only what needs a caller raises it (an unexpected failure too, as INTERNAL).
    context.identity = { refusal: refusal as DomainError, presentedAs };
    // Credentials refused as such (not an outage) count against the address's budget.
    if (budget && refusal instanceof DomainError && statusOfCode(refusal.code) === 401) {
      await budget.refused(request.ip).catch(() => undefined);
    }
  }
}
