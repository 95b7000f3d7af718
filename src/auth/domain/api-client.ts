import type { ApiVersion } from '../../common/domain/api-versions';
import { ClientRole, END_USER_NAME, RecordedClient } from '../../common/domain/request-record';

export interface ApiClient {
  readonly id: string;
  readonly name: string;
  readonly role: ClientRole;
  readonly tenant: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  /** The API version its requests are answered under when they name none. */
  readonly apiVersion: ApiVersion;
}

/**
 * How an end user is shown to themself: their subject at their provider and, from a web app's ID
 * token, the display claims the provider gave. Only ever in an answer to that user: never in the
 * request's record, so never in the audit log or a log line (the pseudonym is their name there).
 */
export interface EndUserProfile {
  readonly subject: string;
  readonly name?: string;
  readonly preferredUsername?: string;
  readonly email?: string;
}

/**
 * The caller of a request, once its credentials have been accepted: the record's client (noteClient
 * copies the record's fields, and nothing else), and for an end user their profile.
 */
export type AuthenticatedClient = RecordedClient & { readonly profile?: EndUserProfile };

export interface NewApiClient {
  readonly name: string;
  readonly role: ClientRole;
  readonly tenant: string;
  readonly expiresAt: Date | null;
  /** The API version to pin it to; the current one when not said. */
  readonly apiVersion?: string;
}

/** An end user as a caller: known by their pseudonym, named as every end user is, with their token's scopes. */
export function endUserCaller(pseudonym: string, tenant: string, scopes?: readonly string[], profile?: EndUserProfile): AuthenticatedClient {
  return { id: pseudonym, name: END_USER_NAME, role: 'end_user', tenant, ...(scopes ? { scopes } : {}), ...(profile ? { profile } : {}) };
}
