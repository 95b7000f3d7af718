import { CLIENT_ROLES, ClientRole, END_USER_NAME, RecordedClient } from '../../common/domain/request-record';

export const API_CLIENT_ROLES = CLIENT_ROLES;
export type ApiClientRole = ClientRole;

export interface ApiClient {
  readonly id: string;
  readonly name: string;
  readonly role: ApiClientRole;
  readonly tenant: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}

/** The caller of a request, once its token has been accepted: the record's client (one shape, no cast between them). */
export type AuthenticatedClient = RecordedClient;

export interface NewApiClient {
  readonly name: string;
  readonly role: ApiClientRole;
  readonly tenant: string;
  readonly expiresAt: Date | null;
}

/** An end user as a caller: known by their pseudonym, named as every end user is, with their token's scopes. */
export function endUserCaller(pseudonym: string, tenant: string, scopes?: readonly string[]): AuthenticatedClient {
  return { id: pseudonym, name: END_USER_NAME, role: 'end_user', tenant, ...(scopes ? { scopes } : {}) };
}
