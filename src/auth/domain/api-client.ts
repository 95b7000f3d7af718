export const API_CLIENT_ROLES = ['partner', 'admin'] as const;
export type ApiClientRole = (typeof API_CLIENT_ROLES)[number];

export interface ApiClient {
  readonly id: string;
  readonly name: string;
  readonly role: ApiClientRole;
  readonly tenant: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}

/** The caller of a request, once its token has been accepted. */
export interface AuthenticatedClient {
  readonly id: string;
  readonly name: string;
  readonly role: ApiClientRole;
  readonly tenant: string;
}

export interface NewApiClient {
  readonly name: string;
  readonly role: ApiClientRole;
  readonly tenant: string;
  readonly expiresAt: Date | null;
}
