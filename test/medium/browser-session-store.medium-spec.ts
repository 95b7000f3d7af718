import { randomBytes } from 'node:crypto';
import { BrowserSessionStore, StoredSession } from '../../src/auth/domain/browser-session-store.port';
import { LogoutNotice, RelyingParty, SessionTokens } from '../../src/auth/domain/relying-party.port';
import { BrowserSessions, hashOf } from '../../src/auth/domain/browser-sessions.service';
import { NoAccessTokens } from '../../src/auth/domain/access-tokens.port';
import { Pseudonyms } from '../../src/auth/domain/pseudonyms';
import { JoseSealedBox } from '../../src/common/sealing/jose-sealed-box';
import { BROWSER_SESSIONS_ENDED, PostgresBrowserSessionRepository } from '../../src/auth/persistence/postgres-browser-session.repository';
import { PostgresNotifications } from '../../src/database/postgres-notifications';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';
import { buildCustomerRequest } from '../support/builders';
import { waitFor } from '../support/wait-for';

const BOX_KEY = randomBytes(32);
const ISSUER = 'https://login.partner.example';

/** A provider whose token endpoint answers only when the test lets it. */
class SlowTokenEndpoint extends RelyingParty {
  readonly issuer = ISSUER;
  asked = 0;
  private release!: () => void;
  private readonly released = new Promise<void>((resolve) => (this.release = resolve));
  startLogin(): never {
    throw new Error('not in these tests');
  }
  finishLogin(): never {
    throw new Error('not in these tests');
  }
  async refresh(): Promise<SessionTokens> {
    this.asked += 1;
    await this.released;
    return { accessToken: 'x.y.z', accessExpiresAt: Date.now() + 600_000 };
  }
  logoutUrl(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }
  revoke(): Promise<void> {
    return Promise.resolve();
  }
  readLogoutToken(): Promise<LogoutNotice> {
    return Promise.reject(new Error('not in these tests'));
  }
  answer(): void {
    this.release();
  }
}

/** A session whose access token has expired and whose refresh token is good: its next use renews it. */
async function expiredSession(cookie: string): Promise<StoredSession> {
  const idHash = hashOf(cookie);
  const tokens: SessionTokens = { accessToken: 'a.b.c', accessExpiresAt: Date.now() - 1000, refreshToken: 'refresh' };
  const now = Date.now();
  return {
    idHash,
    tenant: 'default',
    endUser: '00000000-0000-8000-8000-000000000000',
    issuer: ISSUER,
    sealedTokens: await new JoseSealedBox(BOX_KEY).seal(tokens, `session:${idHash}`),
    accessExpiresAt: new Date(tokens.accessExpiresAt),
    createdAt: new Date(now),
    lastSeenAt: new Date(now),
    expiresAt: new Date(now + 3_600_000),
    version: 1,
  };
}

/** PostgresBrowserSessionRepository on PostgreSQL with the real migrations: what the review of its concurrency found. */
describe(PostgresBrowserSessionRepository.name, () => {
  let t: TestApp;
  let store: PostgresBrowserSessionRepository;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_POOL_SIZE: '4' });
    store = t.app.get(PostgresBrowserSessionRepository);
  });

  afterAll(async () => {
    await t.close();
  });

  it('finding 6: when many sessions renew at a token endpoint that does not answer, then partner writes still get a connection and succeed', async () => {
    const provider = new SlowTokenEndpoint();
    const sessions = new BrowserSessions(
      {
        settings: {
          idleTimeoutSeconds: 1800,
          absoluteTimeoutSeconds: 43_200,
          publicOrigin: () => t.baseUrl,
          publicOriginConfigured: true,
          allowedOrigins: () => [t.baseUrl],
          callbackPath: '/api/v1/session/callback',
        },
        provider,
        box: new JoseSealedBox(BOX_KEY),
      },
      t.app.get(BrowserSessionStore),
      new NoAccessTokens(),
      new Pseudonyms(randomBytes(32)),
    );
    const cookies = Array.from({ length: 8 }, () => randomBytes(32).toString('base64url'));
    for (const cookie of cookies) await store.create(await expiredSession(cookie));
    const partner = await t.createClient('partner');

    // Twice the pool's connections wait at the provider at once.
    const renewing = cookies.map((cookie) => sessions.authenticate(cookie).catch((error: unknown) => error));
    await waitFor(() => provider.asked === cookies.length, { timeoutMs: 10_000, what: 'every session to ask the provider' });
    const write = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: buildCustomerRequest() });
    provider.answer();
    await Promise.all(renewing);

    expect(write.status).toBe(201);
    const versions = await t.asOwner<{ version: number }>('SELECT version FROM browser_sessions WHERE id_hash = ANY($1)', [cookies.map(hashOf)]);
    expect(versions.map((row) => row.version)).toEqual(cookies.map(() => 2));
  });

  it('finding 13: when a session ends on another replica while this one is reading it, then this replica does not remember it afterwards', async () => {
    const cookie = randomBytes(32).toString('base64url');
    const session = await expiredSession(cookie);
    await store.create(session);
    const notifications = t.app.get(PostgresNotifications);
    await waitFor(() => notifications.live, { timeoutMs: 5000, what: 'the notifications to be live' });

    // The store's read of this session is held after PostgreSQL answered it (the row still there), until the ending has been heard.
    const dataSource = t.dataSource;
    const query = dataSource.query.bind(dataSource);
    let answered!: () => void;
    const readAnswered = new Promise<void>((resolve) => (answered = resolve));
    let heard!: () => void;
    const endingHeard = new Promise<void>((resolve) => (heard = resolve));
    const held = async (sql: string, parameters?: unknown[]): Promise<unknown> => {
      if (!sql.includes('FROM browser_sessions WHERE id_hash')) return query(sql, parameters);
      dataSource.query = query;
      const rows: unknown = await query(sql, parameters);
      answered();
      await endingHeard;
      return rows;
    };
    dataSource.query = held as typeof dataSource.query;
    notifications.channel(BROWSER_SESSIONS_ENDED).subscribe(() => heard());
    try {
      const reading = store.find(session.idHash, true);
      await readAnswered;
      // Another replica ends it: the row goes, and every replica is told.
      await t.asOwner(`WITH gone AS (DELETE FROM browser_sessions WHERE id_hash = $1) SELECT pg_notify('${BROWSER_SESSIONS_ENDED}', '')`, [session.idHash]);
      await expect(reading).resolves.toMatchObject({ idHash: session.idHash });

      await expect(store.find(session.idHash)).resolves.toBeUndefined();
    } finally {
      dataSource.query = query;
    }
  });
});
