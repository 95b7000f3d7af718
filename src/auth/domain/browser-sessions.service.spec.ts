import { randomBytes } from 'node:crypto';
import { JoseSealedBox } from '../../common/sealing/jose-sealed-box';
import { InvalidLogoutToken, IssuerUnavailable, ReturnToRefused, SessionEnded, SessionsNotConfigured } from './auth.errors';
import { BrowserSessionStore, StoredSession } from './browser-session-store.port';
import { LogoutNotice, RefreshRefused, RelyingParty, SessionTokens } from './relying-party.port';
import { BrowserSessions, hashOf } from './browser-sessions.service';
import { NoAccessTokens } from './access-tokens.port';
import { Pseudonyms } from './pseudonyms';
import { SessionTokenKeeper } from './session-token-keeper';

const ORIGIN = 'https://api.partner.example';

/** A provider whose logout tokens and refresh answers say what the test wants. */
class ScriptedProvider extends RelyingParty {
  readonly issuer = 'https://login.partner.example';
  notice: LogoutNotice = { subject: 'demo', jti: 'jti-1', expiresAt: new Date(Date.now() + 60_000) };
  refusal: Error = new RefreshRefused();
  /** Set: the provider cannot be reached, for logout and revocation too. */
  down?: Error;
  readonly revoked: string[] = [];
  startLogin(): never {
    throw new Error('not in these tests');
  }
  finishLogin(): never {
    throw new Error('not in these tests');
  }
  refresh(): Promise<SessionTokens> {
    return Promise.reject(this.refusal);
  }
  logoutUrl(): Promise<string | undefined> {
    return this.down ? Promise.reject(this.down) : Promise.resolve(`${this.issuer}/session/end`);
  }
  revoke(refreshToken: string): Promise<void> {
    if (this.down) return Promise.reject(this.down);
    this.revoked.push(refreshToken);
    return Promise.resolve();
  }
  readLogoutToken(): Promise<LogoutNotice> {
    return Promise.resolve(this.notice);
  }
}

/** The sessions the tests end, and the logout tokens' keys used up with them (in one step, as the PostgreSQL store does it in one transaction). */
class EndingStore extends BrowserSessionStore {
  readonly endings: { issuer: string; endUser?: string; sidHash?: string }[] = [];
  readonly usedKeys = new Set<string>();
  /** Set: the next ending fails (the database went away), and nothing of it is kept. */
  failNextEnding = false;
  saveLogin(): never {
    throw new Error('not in these tests');
  }
  takeLogin(): never {
    throw new Error('not in these tests');
  }
  create(): never {
    throw new Error('not in these tests');
  }
  find(_idHash: string, _fresh?: boolean): Promise<StoredSession | undefined> {
    return Promise.resolve(undefined);
  }
  touch(): Promise<void> {
    return Promise.resolve();
  }
  claimRenewal(_idHash: string, _version: number): Promise<boolean> {
    return Promise.reject(new Error('not in these tests'));
  }
  saveRenewal(_idHash: string, _version: number, _renewed: { sealedTokens: string; accessExpiresAt: Date }): Promise<StoredSession | undefined> {
    return Promise.reject(new Error('not in these tests'));
  }
  releaseRenewal(): Promise<void> {
    return Promise.resolve();
  }
  end(_idHash: string): Promise<StoredSession | undefined> {
    return Promise.resolve(undefined);
  }
  endAll(where: { issuer: string; endUser?: string; sidHash?: string }, once?: { key: string }): Promise<{ ended: StoredSession[]; alreadyUsed: boolean }> {
    if (this.failNextEnding) {
      this.failNextEnding = false;
      return Promise.reject(new Error('the database went away'));
    }
    if (once && this.usedKeys.has(once.key)) return Promise.resolve({ ended: [], alreadyUsed: true });
    if (once) this.usedKeys.add(once.key);
    this.endings.push(where);
    return Promise.resolve({ ended: [], alreadyUsed: false });
  }
  listOf(): Promise<StoredSession[]> {
    return Promise.resolve([]);
  }
  endAllOf(): Promise<StoredSession[]> {
    return Promise.resolve([]);
  }
}

/** One session, whose access token has expired, with a refresh token; renewal runs as the PostgreSQL store runs it. */
class OneSessionStore extends EndingStore {
  readonly ended: string[] = [];
  constructor(public session: StoredSession) {
    super();
  }
  override find(idHash: string): Promise<StoredSession | undefined> {
    return Promise.resolve(idHash === this.session.idHash && !this.ended.includes(idHash) ? this.session : undefined);
  }
  override claimRenewal(idHash: string, version: number): Promise<boolean> {
    return Promise.resolve(idHash === this.session.idHash && version === this.session.version);
  }
  override saveRenewal(idHash: string, version: number, renewed: { sealedTokens: string; accessExpiresAt: Date }): Promise<StoredSession | undefined> {
    if (idHash !== this.session.idHash || version !== this.session.version || this.ended.includes(idHash)) return Promise.resolve(undefined);
    this.session = { ...this.session, ...renewed, version: version + 1 };
    return Promise.resolve(this.session);
  }
  override end(idHash: string): Promise<StoredSession | undefined> {
    const ended = idHash === this.session.idHash && !this.ended.includes(idHash) ? this.session : undefined;
    this.ended.push(idHash);
    return Promise.resolve(ended);
  }
}

const BOX_KEY = randomBytes(32);

async function expiredSession(cookie: string, key: Buffer = BOX_KEY): Promise<StoredSession> {
  const idHash = hashOf(cookie);
  const tokens: SessionTokens = { accessToken: 'a.b.c', accessExpiresAt: Date.now() - 1000, refreshToken: 'refresh' };
  return {
    idHash,
    tenant: 'default',
    endUser: '00000000-0000-8000-8000-000000000000',
    issuer: 'https://login.partner.example',
    sealedTokens: await new JoseSealedBox(key).seal(tokens, `session:${idHash}`),
    accessExpiresAt: new Date(tokens.accessExpiresAt),
    createdAt: new Date(),
    lastSeenAt: new Date(),
    expiresAt: new Date(Date.now() + 3_600_000),
    version: 1,
  };
}

function sessions(provider = new ScriptedProvider(), store: BrowserSessionStore = new EndingStore()) {
  return new BrowserSessions(
    {
      settings: {
        idleTimeoutSeconds: 1800,
        absoluteTimeoutSeconds: 43_200,
        publicOrigin: () => ORIGIN,
        publicOriginConfigured: true,
        allowedOrigins: () => [ORIGIN, 'https://app.partner.example'],
        callbackPath: '/api/v1/session/callback',
      },
      provider,
      box: new JoseSealedBox(BOX_KEY),
    },
    store,
    new NoAccessTokens(),
    new Pseudonyms(randomBytes(32)),
  );
}

describe(BrowserSessions.name, () => {
  it.each([
    [undefined, `${ORIGIN}/`],
    ['', `${ORIGIN}/`],
    ['/app/', `${ORIGIN}/app/`],
    ['/app/?tab=1#x', `${ORIGIN}/app/?tab=1#x`],
    ['https://app.partner.example/home', 'https://app.partner.example/home'],
    [`${ORIGIN}/elsewhere`, `${ORIGIN}/elsewhere`],
  ])('when a login returns to %j, then the browser goes to %j', (value, target) => {
    expect(sessions().returnTo(value)).toBe(target);
  });

  it.each([
    ['another origin', 'https://evil.example/'],
    ['an allowed host on another scheme', 'http://app.partner.example/'],
    ['a scheme-relative URL', '//evil.example/'],
    ['a backslash', '/\\evil.example/'],
    ['a tab', '/\tevil'],
    ['a script', 'javascript:alert(1)'],
    ['data', 'data:text/html,x'],
    ['credentials in the URL', 'https://user:pass@app.partner.example/'],
    ['a path that climbs to another origin', '/..//evil.example/'],
    ['a very long value', `/${'a'.repeat(2000)}`],
  ])('when a login returns to %s, then it is refused', (_what, value) => {
    expect(() => sessions().returnTo(value)).toThrow(ReturnToRefused);
  });

  it.each([
    ['a cookie of the wrong shape', 'abc'],
    ['an unknown session', randomBytes(32).toString('base64url')],
  ])('when a request has %s, then its session has ended', async (_what, cookie) => {
    await expect(sessions().authenticate(cookie)).rejects.toBeInstanceOf(SessionEnded);
  });

  it('when the provider sends the same logout token twice, then the second is refused and nothing more ends', async () => {
    const store = new EndingStore();
    const subject = sessions(new ScriptedProvider(), store);

    await subject.backchannelLogout('token');
    const second = subject.backchannelLogout('token');

    await expect(second).rejects.toBeInstanceOf(InvalidLogoutToken);
    expect(store.endings).toHaveLength(1);
    expect(store.endings[0].endUser).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('finding 11: when ending the sessions of a logout token fails, then the provider’s retry of the same token ends them', async () => {
    const store = new EndingStore();
    const subject = sessions(new ScriptedProvider(), store);
    store.failNextEnding = true;

    await expect(subject.backchannelLogout('token')).rejects.toThrow('the database went away');
    const retry = await subject.backchannelLogout('token');

    expect(retry.ended).toBe(0);
    expect(store.endings).toHaveLength(1);
  });

  it('finding 5: when a session’s tokens were sealed under another key (SESSION_KEY changed), then that session ends (401), never a 500', async () => {
    const cookie = randomBytes(32).toString('base64url');
    const store = new OneSessionStore(await expiredSession(cookie, randomBytes(32)));

    await expect(sessions(new ScriptedProvider(), store).authenticate(cookie)).rejects.toBeInstanceOf(SessionEnded);
    expect(store.ended).toEqual([hashOf(cookie)]);
  });

  it('finding 3: when the provider is down, then logout still ends the session and answers (no logout URL), and nothing is revoked', async () => {
    const cookie = randomBytes(32).toString('base64url');
    const store = new OneSessionStore(await expiredSession(cookie));
    const provider = new ScriptedProvider();
    provider.down = new IssuerUnavailable(new Error('connect ECONNREFUSED'));

    const answer = await sessions(provider, store).logout([cookie], '/app/');

    expect(answer.logoutUrl).toBeUndefined();
    expect(answer.ended?.idHash).toBe(hashOf(cookie));
    expect(store.ended).toEqual([hashOf(cookie)]);
  });

  it('finding 12: when a session is logged out, then its refresh token is revoked at the provider', async () => {
    const cookie = randomBytes(32).toString('base64url');
    const provider = new ScriptedProvider();

    await sessions(provider, new OneSessionStore(await expiredSession(cookie))).logout([cookie], undefined);

    expect(provider.revoked).toEqual(['refresh']);
  });

  it('when the provider refuses the refresh token of a session whose access token has expired, then the session ends', async () => {
    const cookie = randomBytes(32).toString('base64url');
    const store = new OneSessionStore(await expiredSession(cookie));

    await expect(sessions(new ScriptedProvider(), store).authenticate(cookie)).rejects.toBeInstanceOf(SessionEnded);
    expect(store.ended).toEqual([hashOf(cookie)]);
  });

  it('when the provider cannot be reached to renew an expired access token, then the request is 503 and the session is kept for a retry', async () => {
    const cookie = randomBytes(32).toString('base64url');
    const store = new OneSessionStore(await expiredSession(cookie));
    const provider = new ScriptedProvider();
    provider.refusal = new IssuerUnavailable(new Error('connect ECONNREFUSED'));

    await expect(sessions(provider, store).authenticate(cookie)).rejects.toBeInstanceOf(IssuerUnavailable);
    expect(store.ended).toEqual([]);
  });

  it('when this request’s renewal claim outlived its lease and another request saved first, then the session goes on with theirs (never a 401)', async () => {
    const cookie = randomBytes(32).toString('base64url');
    const store = new OneSessionStore(await expiredSession(cookie));
    const theirs: StoredSession = { ...(await expiredSession(cookie)), accessExpiresAt: new Date(Date.now() + 600_000), version: 2 };
    const tokens: SessionTokens = { accessToken: 'x.y.z', accessExpiresAt: Date.now() + 600_000, refreshToken: 'rt-2' };
    const sealed = { ...theirs, sealedTokens: await new JoseSealedBox(BOX_KEY).seal(tokens, `session:${theirs.idHash}`) };
    const provider = new ScriptedProvider();
    provider.refresh = () => {
      // Meanwhile, the other request saved its renewal: this one's save finds the session at version 2.
      store.session = sealed;
      return Promise.resolve({ accessToken: 'mine', accessExpiresAt: Date.now() + 600_000 });
    };
    const keeper = new SessionTokenKeeper(provider, new JoseSealedBox(BOX_KEY), store, Date.now, () => Promise.resolve());

    const fresh = await keeper.fresh(await expiredSession(cookie));

    expect(fresh.session.version).toBe(2);
    expect(fresh.tokens.accessToken).toBe('x.y.z');
  });

  it('when sessions are not configured, then every session endpoint says so', async () => {
    const off = new BrowserSessions(undefined, new EndingStore(), new NoAccessTokens(), new Pseudonyms(randomBytes(32)));

    expect(off.enabled).toBe(false);
    await expect(off.startLogin('/')).rejects.toBeInstanceOf(SessionsNotConfigured);
    await expect(off.backchannelLogout('x')).rejects.toBeInstanceOf(SessionsNotConfigured);
  });
});

describe(JoseSealedBox.name, () => {
  it('when a value is sealed for one session, then it opens there and nowhere else, nor under another key', async () => {
    const key = randomBytes(32);
    const box = new JoseSealedBox(key);
    const sealed = await box.seal({ accessToken: 'secret' }, 'session:a');

    await expect(box.open(sealed, 'session:a')).resolves.toEqual({ accessToken: 'secret' });
    await expect(box.open(sealed, 'session:b')).rejects.toThrow();
    await expect(new JoseSealedBox(randomBytes(32)).open(sealed, 'session:a')).rejects.toThrow();
    expect(sealed).not.toContain('secret');
  });

  it('when SESSION_KEY is rotated with the old key among the previous ones, then what the old key sealed still opens, and new values are sealed under the new key only', async () => {
    const [old, current] = [randomBytes(32), randomBytes(32)];
    const before = await new JoseSealedBox(old).seal({ accessToken: 'a' }, 'session:a');
    const rotated = new JoseSealedBox(current, [old]);

    const after = await rotated.seal({ accessToken: 'b' }, 'session:b');

    await expect(rotated.open(before, 'session:a')).resolves.toEqual({ accessToken: 'a' });
    await expect(new JoseSealedBox(current).open(after, 'session:b')).resolves.toEqual({ accessToken: 'b' });
    await expect(new JoseSealedBox(old).open(after, 'session:b')).rejects.toThrow(/names a key this service does not have/);
    await expect(new JoseSealedBox(current).open(before, 'session:a')).rejects.toThrow();
  });

  it('when a value was sealed before keys had ids, then the current key opens it', async () => {
    const key = randomBytes(32);
    const { CompactEncrypt } = await import('jose');
    const legacy = await new CompactEncrypt(new TextEncoder().encode('{"accessToken":"x"}'))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', ctx: 'session:a' })
      .encrypt(key);

    await expect(new JoseSealedBox(key, [randomBytes(32)]).open(legacy, 'session:a')).resolves.toEqual({ accessToken: 'x' });
    // Rotated right after: the key that sealed it is now a previous one, and it still opens.
    await expect(new JoseSealedBox(randomBytes(32), [key]).open(legacy, 'session:a')).resolves.toEqual({ accessToken: 'x' });
    await expect(new JoseSealedBox(randomBytes(32), [randomBytes(32)]).open(legacy, 'session:a')).rejects.toThrow();
  });
});
