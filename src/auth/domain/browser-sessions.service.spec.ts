import { randomBytes } from 'node:crypto';
import { InMemoryProofReplay } from '../../../test/support/fakes';
import { JoseSealedBox } from '../oidc/jose-sealed-box';
import { cookieOf } from '../http/session-cookies';
import { CsrfRejected, InvalidLogoutToken, IssuerUnavailable, ReturnToRefused, SessionEnded, SessionsNotConfigured } from './auth.errors';
import { BrowserSessionStore, LogoutNotice, RefreshRefused, RelyingParty, SessionTokens, StoredSession } from './browser-session.ports';
import { BrowserSessions, hashOf, SessionPresentation } from './browser-sessions.service';
import { NoEndUserTokens } from './end-user-tokens.port';
import { Pseudonyms } from './pseudonyms';

const ORIGIN = 'https://api.partner.example';

/** A provider whose logout tokens and refresh answers say what the test wants. */
class ScriptedProvider extends RelyingParty {
  readonly issuer = 'https://login.partner.example';
  notice: LogoutNotice = { subject: 'demo', jti: 'jti-1', expiresAt: new Date(Date.now() + 60_000) };
  refusal: Error = new RefreshRefused();
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
    return Promise.resolve(undefined);
  }
  readLogoutToken(): Promise<LogoutNotice> {
    return Promise.resolve(this.notice);
  }
}

/** The sessions the tests end; finding one is not what these tests are about. */
class EndingStore extends BrowserSessionStore {
  readonly endings: { issuer: string; endUser?: string; sidHash?: string }[] = [];
  saveLogin(): never {
    throw new Error('not in these tests');
  }
  takeLogin(): never {
    throw new Error('not in these tests');
  }
  create(): never {
    throw new Error('not in these tests');
  }
  find(_idHash: string): Promise<StoredSession | undefined> {
    return Promise.resolve(undefined);
  }
  touch(): never {
    throw new Error('not in these tests');
  }
  renew(
    _idHash: string,
    _stale: (session: StoredSession) => boolean,
    _renew: (session: StoredSession) => Promise<{ sealedTokens: string; accessExpiresAt: Date }>,
  ): Promise<StoredSession | undefined> {
    return Promise.reject(new Error('not in these tests'));
  }
  end(_idHash: string): Promise<StoredSession | undefined> {
    return Promise.resolve(undefined);
  }
  endAll(where: { issuer: string; endUser?: string; sidHash?: string }): Promise<StoredSession[]> {
    this.endings.push(where);
    return Promise.resolve([]);
  }
}

/** One session whose access token has expired, with a refresh token; renewal runs as the PostgreSQL store runs it. */
class ExpiredSessionStore extends EndingStore {
  readonly ended: string[] = [];
  constructor(private readonly session: StoredSession) {
    super();
  }
  override find(idHash: string): Promise<StoredSession | undefined> {
    return Promise.resolve(idHash === this.session.idHash && !this.ended.includes(idHash) ? this.session : undefined);
  }
  override async renew(
    idHash: string,
    stale: (session: StoredSession) => boolean,
    renew: (session: StoredSession) => Promise<{ sealedTokens: string; accessExpiresAt: Date }>,
  ): Promise<StoredSession | undefined> {
    const current = await this.find(idHash);
    if (!current || !stale(current)) return current;
    return { ...current, ...(await renew(current)), version: current.version + 1 };
  }
  override end(idHash: string): Promise<StoredSession | undefined> {
    this.ended.push(idHash);
    return Promise.resolve(undefined);
  }
}

const BOX_KEY = randomBytes(32);

async function expiredSession(cookie: string): Promise<StoredSession> {
  const idHash = hashOf(cookie);
  const tokens: SessionTokens = { accessToken: 'a.b.c', accessExpiresAt: Date.now() - 1000, refreshToken: 'refresh' };
  return {
    idHash,
    tenant: 'default',
    endUser: '00000000-0000-8000-8000-000000000000',
    issuer: 'https://login.partner.example',
    sealedTokens: await new JoseSealedBox(BOX_KEY).seal(tokens, `session:${idHash}`),
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
      },
      provider,
      box: new JoseSealedBox(BOX_KEY),
    },
    store,
    new NoEndUserTokens(),
    new Pseudonyms(randomBytes(32)),
    new InMemoryProofReplay(),
  );
}

const presented = (overrides: Partial<SessionPresentation> = {}): SessionPresentation => ({
  cookie: randomBytes(32).toString('base64url'),
  csrf: '1',
  origin: undefined,
  method: 'GET',
  ...overrides,
});

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
    ['no X-CSRF header', { csrf: undefined }],
    ['X-CSRF other than 1', { csrf: 'true' }],
    ['X-CSRF sent twice', { csrf: ['1', '1'] }],
    ['an origin not allowed', { origin: 'https://evil.example' }],
    ['the null origin', { origin: 'null' }],
    ['two origins', { origin: [ORIGIN, ORIGIN] }],
  ])('when a request with the cookie has %s, then it is refused as a forgery before any session is looked up', async (_what, overrides) => {
    await expect(sessions().authenticate(presented(overrides))).rejects.toBeInstanceOf(CsrfRejected);
  });

  it.each([
    ['a cookie of the wrong shape', 'abc'],
    ['a cookie sent twice', ['a', 'b']],
    ['an unknown session', randomBytes(32).toString('base64url')],
  ])('when a request has %s, then its session has ended', async (_what, cookie) => {
    await expect(sessions().authenticate(presented({ cookie }))).rejects.toBeInstanceOf(SessionEnded);
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

  it('when the provider refuses the refresh token of a session whose access token has expired, then the session ends', async () => {
    const cookie = randomBytes(32).toString('base64url');
    const store = new ExpiredSessionStore(await expiredSession(cookie));

    await expect(sessions(new ScriptedProvider(), store).authenticate(presented({ cookie }))).rejects.toBeInstanceOf(SessionEnded);
    expect(store.ended).toEqual([hashOf(cookie)]);
  });

  it('when the provider cannot be reached to renew an expired access token, then the request is 503 and the session is kept for a retry', async () => {
    const cookie = randomBytes(32).toString('base64url');
    const store = new ExpiredSessionStore(await expiredSession(cookie));
    const provider = new ScriptedProvider();
    provider.refusal = new IssuerUnavailable(new Error('connect ECONNREFUSED'));

    await expect(sessions(provider, store).authenticate(presented({ cookie }))).rejects.toBeInstanceOf(IssuerUnavailable);
    expect(store.ended).toEqual([]);
  });

  it('when sessions are not configured, then every session endpoint says so', async () => {
    const off = new BrowserSessions(undefined, new EndingStore(), new NoEndUserTokens(), new Pseudonyms(randomBytes(32)), new InMemoryProofReplay());

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
});

describe(cookieOf.name, () => {
  it.each([
    [undefined, undefined],
    ['a=1', undefined],
    ['__Host-gw_session=abc', 'abc'],
    ['a=1; __Host-gw_session=abc; b=2', 'abc'],
    ['__Host-gw_session=abc; __Host-gw_session=def', ['abc', 'def']],
    ['x__Host-gw_session=abc', undefined],
  ])('when the Cookie header is %j, then the session cookie is %j', (header, value) => {
    expect(cookieOf(header, '__Host-gw_session')).toEqual(value);
  });
});
