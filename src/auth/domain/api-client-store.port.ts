import { ApiClient } from './api-client';

export interface StoredApiClient extends ApiClient {
  readonly tokenHash: string;
}

/** Where client records live. Tokens arrive here only as their SHA-256 hash. */
export abstract class ApiClientStore {
  /** Saves a new client; throws ApiClientNameTaken when an active client has the name. */
  abstract insert(client: StoredApiClient): Promise<void>;

  /** The client whose token hashes to `tokenHash`, whatever its state; undefined when none. */
  abstract findByTokenHash(tokenHash: string): Promise<StoredApiClient | undefined>;

  /** Every client, newest first, revoked ones included. */
  abstract list(): Promise<ApiClient[]>;

  /** Marks the active client with this name revoked; returns it, or undefined when none is active. */
  abstract revokeActiveByName(name: string, at: Date): Promise<ApiClient | undefined>;

  abstract count(): Promise<number>;
}
