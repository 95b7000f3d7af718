/** Where web apps' browser sessions are kept (docs/security.md, "Web apps"). */

/** A login under way, kept between its start and its callback. */
export interface PendingLogin {
  readonly stateHash: string;
  /** The SHA-256 of the login cookie of the browser that started it. */
  readonly bindingHash: string;
  readonly sealed: string;
  readonly expiresAt: Date;
}

/** A session as stored: its id only as a hash, its tokens sealed. */
export interface StoredSession {
  readonly idHash: string;
  readonly tenant: string;
  /** The end user's pseudonym. */
  readonly endUser: string;
  readonly issuer: string;
  readonly sidHash?: string;
  readonly sealedTokens: string;
  readonly accessExpiresAt: Date;
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
  /** The absolute timeout. */
  readonly expiresAt: Date;
  readonly version: number;
}

/** Where sessions are kept, shared by every replica. */
export abstract class BrowserSessionStore {
  abstract saveLogin(login: PendingLogin): Promise<void>;
  /** The login, removed: a second callback with the same state finds nothing. Undefined when unknown or expired. */
  abstract takeLogin(stateHash: string): Promise<Omit<PendingLogin, 'stateHash'> | undefined>;
  abstract create(session: StoredSession): Promise<void>;
  /** `fresh`: read from the store itself, not from what this replica remembers. */
  abstract find(idHash: string, fresh?: boolean): Promise<StoredSession | undefined>;
  abstract touch(idHash: string, at: Date): Promise<void>;
  /**
   * Claims the renewal of the session's tokens for `leaseMs`: true when the session is still at
   * `version` and no other request (of any replica) holds a claim, so this one may ask the provider.
   * Nothing is held while the provider is asked: no row lock, no connection.
   */
  abstract claimRenewal(idHash: string, version: number, leaseMs: number): Promise<boolean>;
  /**
   * Saves renewed tokens, if the session is still at `version`, and gives the claim up. Undefined
   * when the session has ended meanwhile.
   */
  abstract saveRenewal(idHash: string, version: number, renewed: { sealedTokens: string; accessExpiresAt: Date }): Promise<StoredSession | undefined>;
  /** Gives a claim up without renewing (the provider could not be asked). */
  abstract releaseRenewal(idHash: string, version: number): Promise<void>;
  /** Ends one session, on every replica. */
  abstract end(idHash: string): Promise<StoredSession | undefined>;
  /**
   * Ends, on every replica, the sessions made in a provider session (`sidHash`, of `endUser` when
   * given), or else every session of `endUser`, at an issuer. With `once`, in the same transaction
   * as recording its key: a key already recorded ends nothing (`alreadyUsed`), and a failure to end
   * them records nothing, so the sender's retry is not refused as a replay.
   */
  abstract endAll(
    where: { issuer: string; endUser?: string; sidHash?: string },
    once?: { key: string; expiresAt: Date },
  ): Promise<{ ended: StoredSession[]; alreadyUsed: boolean }>;
  /** The live sessions of an end user (by pseudonym), newest first (at most 100). */
  abstract listOf(endUser: string): Promise<StoredSession[]>;
  /** Ends, on every replica, every session of an end user (by pseudonym). */
  abstract endAllOf(endUser: string): Promise<StoredSession[]>;
}
