import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/domain/clock.port';
import { API_CLIENT_ROLES, ApiClient, AuthenticatedClient, NewApiClient } from './api-client';
import { ApiClientStore } from './api-client-store.port';
import { InvalidApiClient, InvalidClientToken } from './auth.errors';
import { generateClientToken, hashClientToken, sameHash } from './client-token';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A token is the prefix plus 43 base64url characters; anything far off is not worth a lookup. */
const MAX_TOKEN_LENGTH = 256;

@Injectable()
export class ApiClientsService {
  constructor(
    private readonly store: ApiClientStore,
    private readonly clock: Clock,
  ) {}

  /** Creates a client and returns its token: the only time the token exists outside the caller. */
  async create(request: NewApiClient): Promise<{ client: ApiClient; token: string }> {
    if (!NAME.test(request.name)) {
      throw new InvalidApiClient('name must be 1-100 characters: letters, digits, dot, dash, underscore');
    }
    if (!TENANT.test(request.tenant)) {
      throw new InvalidApiClient('tenant must be 1-64 characters: letters, digits, dot, dash, underscore');
    }
    if (!API_CLIENT_ROLES.includes(request.role)) {
      throw new InvalidApiClient(`role must be one of ${API_CLIENT_ROLES.join(', ')}`);
    }
    const now = this.clock.now();
    if (request.expiresAt && request.expiresAt.getTime() <= now.getTime()) {
      throw new InvalidApiClient('expires_at must be in the future');
    }
    const token = generateClientToken();
    const client: ApiClient = {
      id: randomUUID(),
      name: request.name,
      role: request.role,
      tenant: request.tenant,
      createdAt: now,
      expiresAt: request.expiresAt,
      revokedAt: null,
    };
    await this.store.insert({ ...client, tokenHash: hashClientToken(token) });
    return { client, token };
  }

  /**
   * The client a bearer token belongs to. Throws InvalidClientToken for a missing, unknown,
   * expired or revoked token alike, so a caller learns nothing about which it was.
   */
  async authenticate(token: string | undefined): Promise<AuthenticatedClient> {
    if (!token || token.length > MAX_TOKEN_LENGTH) throw new InvalidClientToken();
    const hash = hashClientToken(token);
    const found = await this.store.findByTokenHash(hash);
    if (!found || !sameHash(found.tokenHash, hash)) throw new InvalidClientToken();
    const now = this.clock.now().getTime();
    if (found.revokedAt && found.revokedAt.getTime() <= now) throw new InvalidClientToken();
    if (found.expiresAt && found.expiresAt.getTime() <= now) throw new InvalidClientToken();
    return { id: found.id, name: found.name, role: found.role, tenant: found.tenant };
  }

  list(): Promise<ApiClient[]> {
    return this.store.list();
  }

  /** Revokes the active client with this name; undefined when there is none. */
  revoke(name: string): Promise<ApiClient | undefined> {
    return this.store.revokeActiveByName(name, this.clock.now());
  }

  count(): Promise<number> {
    return this.store.count();
  }
}
