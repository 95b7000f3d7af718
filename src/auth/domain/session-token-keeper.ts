import { LRUCache } from 'lru-cache';
import { IssuerUnavailable, SessionEnded } from './auth.errors';
import { BrowserSessionStore, StoredSession } from './browser-session-store.port';
import { RefreshRefused, RelyingParty, SessionTokens } from './relying-party.port';
import { SealedBox } from '../../common/domain/sealed-box.port';

/** An access token is renewed when it has less than this left. */
const RENEW_BEFORE_MS = 60_000;
const REMEMBERED_TOKENS = 10_000;
/** How long one request may hold the renewal of a session's tokens (the provider's call is bounded well within it). */
const RENEWAL_LEASE_MS = 15_000;
/** While another request renews: how often, and how long at most, to look for its result. */
const RENEWAL_POLL_MS = 100;
const RENEWAL_WAIT_MS = 5_000;

/**
 * A browser session's tokens: sealed at rest, opened once per replica (by session and version),
 * and renewed at the provider before the access token runs out, by one request of one replica at
 * a time, with nothing held while the provider answers.
 */
export class SessionTokenKeeper {
  private readonly opened = new LRUCache<string, SessionTokens>({ max: REMEMBERED_TOKENS });
  private readonly renewing = new Map<string, Promise<StoredSession | undefined>>();

  constructor(
    private readonly provider: RelyingParty,
    private readonly box: SealedBox,
    private readonly store: BrowserSessionStore,
    private readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  /**
   * The session with tokens fit for use: renewed when the access token is about to expire.
   * @throws SessionEnded, IssuerUnavailable.
   */
  async fresh(session: StoredSession): Promise<{ session: StoredSession; tokens: SessionTokens }> {
    const tokens = await this.tokensOf(session);
    if (tokens.accessExpiresAt - this.now() >= RENEW_BEFORE_MS) return { session, tokens };
    const renewed = await this.renewed(session, tokens);
    return { session: renewed, tokens: await this.tokensOf(renewed) };
  }

  /** Seals a session's tokens, for it alone. */
  seal(tokens: SessionTokens, idHash: string): Promise<string> {
    return this.box.seal(tokens, `session:${idHash}`);
  }

  /**
   * The session's tokens, opened. Tokens sealed under another key (SESSION_KEY changed, or a
   * replica with a key of its own) never open again: that session ends.
   * @throws SessionEnded.
   */
  async tokensOf(session: StoredSession): Promise<SessionTokens> {
    const key = `${session.idHash}:${session.version}`;
    let tokens = this.opened.get(key);
    if (!tokens) {
      try {
        tokens = await this.box.open<SessionTokens>(session.sealedTokens, `session:${session.idHash}`);
      } catch {
        await this.store.end(session.idHash);
        throw new SessionEnded('The session can no longer be read here: log in again');
      }
      this.opened.set(key, tokens);
    }
    return tokens;
  }

  /**
   * The session with a fresh access token. One request of one replica renews it at a time (a claim
   * in the store, and one promise per session here); the provider is asked with nothing held, no
   * row lock and no connection. The others go on with the token they have while it lasts, or wait
   * a little for the renewal.
   */
  private async renewed(session: StoredSession, tokens: SessionTokens): Promise<StoredSession> {
    if (!tokens.refreshToken) {
      if (tokens.accessExpiresAt > this.now()) return session;
      await this.store.end(session.idHash);
      throw new SessionEnded('The session’s access token has expired: log in again');
    }
    let pending = this.renewing.get(session.idHash);
    if (!pending) {
      pending = this.renew(session).finally(() => this.renewing.delete(session.idHash));
      this.renewing.set(session.idHash, pending);
    }
    let renewed: StoredSession | undefined;
    try {
      renewed = await pending;
    } catch (error) {
      // While the access token lasts, the session does, whatever kept it from being renewed.
      if (tokens.accessExpiresAt > this.now()) return session;
      // A provider that cannot be asked ends no session (503, try again); one that refused the refresh token does.
      if (!(error instanceof RefreshRefused)) throw error;
      await this.store.end(session.idHash);
      throw new SessionEnded('The session could not be renewed: log in again');
    }
    if (!renewed) throw new SessionEnded();
    return renewed;
  }

  /**
   * Renews the session's tokens under a claim, or finds them renewed by whoever holds it. A copy
   * this replica remembered may be a version behind: then the fresh one is what needs renewing.
   * Undefined when the session has ended.
   */
  private async renew(session: StoredSession): Promise<StoredSession | undefined> {
    let current = session;
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await this.store.claimRenewal(current.idHash, current.version, RENEWAL_LEASE_MS)) return this.renewClaimed(current);
      const fresh = await this.store.find(current.idHash, true);
      if (!fresh || fresh.version === current.version) return fresh && this.renewedElsewhere(fresh);
      if (fresh.accessExpiresAt.getTime() - this.now() >= RENEW_BEFORE_MS) return fresh;
      current = fresh;
    }
    return this.renewedElsewhere(current);
  }

  /** Asks the provider for fresh tokens, with the claim held (and given up should the provider not answer). */
  private async renewClaimed(session: StoredSession): Promise<StoredSession | undefined> {
    const provider = this.provider;
    const held = await this.tokensOf(session);
    if (!held.refreshToken) throw new RefreshRefused();
    let fresh: SessionTokens;
    try {
      fresh = await provider.refresh(held.refreshToken);
    } catch (error) {
      await this.store.releaseRenewal(session.idHash, session.version).catch(() => undefined);
      throw error;
    }
    const next: SessionTokens = {
      ...fresh,
      refreshToken: fresh.refreshToken ?? held.refreshToken,
      idToken: fresh.idToken ?? held.idToken,
      displayClaims: fresh.displayClaims ?? held.displayClaims,
    };
    const saved = await this.store.saveRenewal(session.idHash, session.version, {
      sealedTokens: await this.seal(next, session.idHash),
      accessExpiresAt: new Date(next.accessExpiresAt),
    });
    // Another request renewed it meanwhile (this one's claim outlived its lease): theirs is as good, if the session lives.
    return saved ?? this.store.find(session.idHash, true);
  }

  /** Another request holds the renewal: its result, once saved (or the session as it is, while its token lasts). */
  private async renewedElsewhere(session: StoredSession): Promise<StoredSession | undefined> {
    const until = this.now() + RENEWAL_WAIT_MS;
    for (;;) {
      const current = await this.store.find(session.idHash, true);
      if (!current || current.version !== session.version || current.accessExpiresAt.getTime() > this.now()) return current;
      if (this.now() >= until) throw new IssuerUnavailable();
      await this.sleep(RENEWAL_POLL_MS);
    }
  }
}
