import { API_VERSIONS, CURRENT_API_VERSION, isApiVersion } from '../../common/domain/api-versions';
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/domain/clock.port';
import { ApiClient, AuthenticatedClient, NewApiClient } from './api-client';
import { CLIENT_ROLES } from '../../common/domain/request-record';
import { ApiClientChanges, NoApiClientChanges } from './api-client-changes.port';
import { ApiClientStore, StoredApiClient } from './api-client-store.port';
import { InvalidApiClient, InvalidToken } from './auth.errors';
import { generateClientToken, hashClientToken, sameHash, TOKEN_PREFIX } from './client-token';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A token is the prefix plus 43 base64url characters (32 bytes): anything else is not worth a lookup. */
const TOKEN_SHAPE = new RegExp(`^${TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`);

/** How long a client found by its token is remembered, at most: a backstop behind the change feed. */
export const REMEMBER_CLIENT_MS = 30_000;
/** Clients remembered at once, at most (the longest remembered are forgotten first). */
const REMEMBERED_CLIENTS = 10_000;

/** Into a bounded memory: the longest remembered goes first when it is full. */
function remember<T>(memory: Map<string, T>, hash: string, entry: T): void {
  if (memory.size >= REMEMBERED_CLIENTS) memory.delete(memory.keys().next().value!);
  memory.set(hash, entry);
}

@Injectable()
export class ApiClientsService {
  /**
   * Clients found by token hash, so that a request does not cost a database round trip. Trusted only
   * while the change feed is live; every change clears it, and so does the feed going down or
   * coming back.
   */
  private readonly remembered = new Map<string, { client: StoredApiClient; at: number }>();
  /**
   * Token hashes the database did not know, for as long as a client would be remembered and on the
   * same terms: the same guessed or stale token sent again costs no lookup. Bounded, so that
   * guessing cannot fill memory, and apart from the clients, so that guessing cannot push a client
   * out of memory either.
   */
  private readonly unknown = new Map<string, { at: number }>();
  /** Bumped on every change: a lookup that started before a change must not be remembered after it. */
  private generation = 0;

  constructor(
    private readonly store: ApiClientStore,
    private readonly clock: Clock,
    private readonly changes: ApiClientChanges = new NoApiClientChanges(),
  ) {
    changes.subscribe(() => {
      this.generation += 1;
      this.remembered.clear();
      this.unknown.clear();
    });
  }

  /** Creates a client and returns its token: the only time the token exists outside the caller. */
  async create(request: NewApiClient): Promise<{ client: ApiClient; token: string }> {
    if (!NAME.test(request.name)) {
      throw new InvalidApiClient('name must be 1-100 characters: letters, digits, dot, dash, underscore');
    }
    if (!TENANT.test(request.tenant)) {
      throw new InvalidApiClient('tenant must be 1-64 characters: letters, digits, dot, dash, underscore');
    }
    if (!CLIENT_ROLES.includes(request.role)) {
      throw new InvalidApiClient(`role must be one of ${CLIENT_ROLES.join(', ')}`);
    }
    const apiVersion = request.apiVersion ?? CURRENT_API_VERSION;
    if (!isApiVersion(apiVersion)) throw new InvalidApiClient(`api version must be one of ${API_VERSIONS.join(', ')}`);
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
      apiVersion,
    };
    await this.store.insert({ ...client, tokenHash: hashClientToken(token) });
    return { client, token };
  }

  /**
   * The client a bearer token belongs to. Throws InvalidToken for a missing, unknown,
   * expired or revoked token alike, so a caller learns nothing about which it was.
   */
  async authenticate(token: string | undefined): Promise<AuthenticatedClient> {
    if (!token || !TOKEN_SHAPE.test(token)) throw new InvalidToken();
    const hash = hashClientToken(token);
    const now = this.clock.now().getTime();
    if (this.fresh(this.unknown, hash, now)) throw new InvalidToken();
    const found = this.fresh(this.remembered, hash, now)?.client ?? (await this.lookUp(hash, now));
    if (!found || !sameHash(found.tokenHash, hash)) throw new InvalidToken();
    if (found.revokedAt && found.revokedAt.getTime() <= now) throw new InvalidToken();
    if (found.expiresAt && found.expiresAt.getTime() <= now) throw new InvalidToken();
    return { id: found.id, name: found.name, role: found.role, tenant: found.tenant, apiVersion: found.apiVersion };
  }

  /** What `memory` holds for `hash`, trusted only while the change feed is live and for REMEMBER_CLIENT_MS. */
  private fresh<T extends { at: number }>(memory: Map<string, T>, hash: string, now: number): T | undefined {
    if (!this.changes.live) return undefined;
    const entry = memory.get(hash);
    if (entry && now - entry.at >= REMEMBER_CLIENT_MS) {
      memory.delete(hash);
      return undefined;
    }
    return entry;
  }

  private async lookUp(hash: string, now: number): Promise<StoredApiClient | undefined> {
    const generation = this.generation;
    const found = await this.store.findByTokenHash(hash);
    if (this.changes.live && generation === this.generation) {
      if (found) remember(this.remembered, hash, { client: found, at: now });
      else remember(this.unknown, hash, { at: now });
    }
    return found;
  }

  /** Unknown token hashes remembered now. */
  get rememberedUnknownCount(): number {
    return this.unknown.size;
  }

  /** Clients remembered now (the tests wait on it for an announced change). */
  get rememberedCount(): number {
    return this.remembered.size;
  }

  /** Changes announced so far (the tests wait on it for a change to have arrived). */
  get changesHeard(): number {
    return this.generation;
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
