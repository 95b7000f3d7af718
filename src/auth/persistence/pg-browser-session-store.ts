import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { DataSource, EntityManager } from 'typeorm';
import { PeriodicTask, startPeriodicTask } from '../../common/runtime/periodic-task';
import { NotificationChannel, PostgresNotifications } from '../../database/postgres-notifications';
import { unavailableOnOutage } from '../../database/store-errors';
import { BrowserSessionStore, PendingLogin, StoredSession } from '../domain/browser-session.ports';

/** The channel every replica listens on: a session ended somewhere, forget what is remembered. */
export const BROWSER_SESSIONS_ENDED = 'browser_sessions_ended';
const SWEEP_EVERY_MS = 60_000;
const REMEMBERED_SESSIONS = 50_000;
const REMEMBER_AT_MOST_MS = 30_000;

interface SessionRow {
  id_hash: string;
  tenant: string;
  end_user: string;
  issuer: string;
  sid_hash: string | null;
  sealed_tokens: string;
  access_expires_at: Date;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  version: number;
}

const COLUMNS = 'id_hash, tenant, end_user, issuer, sid_hash, sealed_tokens, access_expires_at, created_at, last_seen_at, expires_at, version';

function sessionOf(row: SessionRow): StoredSession {
  return {
    idHash: row.id_hash,
    tenant: row.tenant,
    endUser: row.end_user,
    issuer: row.issuer,
    sidHash: row.sid_hash ?? undefined,
    sealedTokens: row.sealed_tokens,
    accessExpiresAt: new Date(row.access_expires_at),
    createdAt: new Date(row.created_at),
    lastSeenAt: new Date(row.last_seen_at),
    expiresAt: new Date(row.expires_at),
    version: row.version,
  };
}

/**
 * Browser sessions in PostgreSQL, shared by every replica. Each replica remembers the sessions it
 * has read while it hears every ending (LISTEN browser_sessions_ended; a logout or back-channel
 * logout on any replica notifies on commit); while it cannot hear, it remembers nothing and reads
 * every time. Logins under way and sessions past their timeouts are swept every minute.
 */
@Injectable()
export class PgBrowserSessionStore extends BrowserSessionStore implements OnApplicationBootstrap, OnApplicationShutdown {
  // Nothing is remembered for more than 30 s, as a backstop behind NOTIFY (as client tokens are).
  private readonly remembered = new LRUCache<string, StoredSession>({ max: REMEMBERED_SESSIONS, ttl: REMEMBER_AT_MOST_MS });
  private readonly channel: NotificationChannel;
  private sweeper?: PeriodicTask;

  constructor(
    private readonly dataSource: DataSource,
    notifications: PostgresNotifications,
    /** Sessions unused this long are swept. */
    private readonly idleTimeoutSeconds: number,
  ) {
    super();
    this.channel = notifications.channel(BROWSER_SESSIONS_ENDED);
    this.channel.subscribe(() => this.remembered.clear());
  }

  async saveLogin(login: PendingLogin): Promise<void> {
    await unavailableOnOutage(() =>
      this.dataSource.query('INSERT INTO browser_logins (state_hash, binding_hash, sealed, expires_at) VALUES ($1, $2, $3, $4)', [
        login.stateHash,
        login.bindingHash,
        login.sealed,
        login.expiresAt,
      ]),
    );
  }

  async takeLogin(stateHash: string): Promise<Omit<PendingLogin, 'stateHash'> | undefined> {
    const [rows] = await unavailableOnOutage(() =>
      this.dataSource.query<[{ binding_hash: string; sealed: string; expires_at: Date }[], number]>(
        'DELETE FROM browser_logins WHERE state_hash = $1 RETURNING binding_hash, sealed, expires_at',
        [stateHash],
      ),
    );
    const row = rows[0];
    if (!row || new Date(row.expires_at).getTime() <= Date.now()) return undefined;
    return { bindingHash: row.binding_hash, sealed: row.sealed, expiresAt: new Date(row.expires_at) };
  }

  async create(session: StoredSession): Promise<void> {
    await unavailableOnOutage(() =>
      this.dataSource.query(`INSERT INTO browser_sessions (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, [
        session.idHash,
        session.tenant,
        session.endUser,
        session.issuer,
        session.sidHash ?? null,
        session.sealedTokens,
        session.accessExpiresAt,
        session.createdAt,
        session.lastSeenAt,
        session.expiresAt,
        session.version,
      ]),
    );
  }

  async find(idHash: string, fresh = false): Promise<StoredSession | undefined> {
    if (!fresh && this.channel.live) {
      const known = this.remembered.get(idHash);
      if (known) return known;
    }
    const rows: SessionRow[] = await unavailableOnOutage(() => this.dataSource.query(`SELECT ${COLUMNS} FROM browser_sessions WHERE id_hash = $1`, [idHash]));
    return this.remember(rows[0]);
  }

  async touch(idHash: string, at: Date): Promise<void> {
    await unavailableOnOutage(() =>
      this.dataSource.query('UPDATE browser_sessions SET last_seen_at = greatest(last_seen_at, $2) WHERE id_hash = $1', [idHash, at]),
    );
    const known = this.remembered.get(idHash);
    if (known && known.lastSeenAt < at) this.remembered.set(idHash, { ...known, lastSeenAt: at });
  }

  async renew(
    idHash: string,
    stale: (session: StoredSession) => boolean,
    renew: (session: StoredSession) => Promise<{ sealedTokens: string; accessExpiresAt: Date }>,
  ): Promise<StoredSession | undefined> {
    const renewed = await unavailableOnOutage(() =>
      this.dataSource.transaction(async (manager: EntityManager) => {
        // The row is held until commit: a second replica renewing the same session waits, then finds it fresh.
        const rows: SessionRow[] = await manager.query(`SELECT ${COLUMNS} FROM browser_sessions WHERE id_hash = $1 FOR UPDATE`, [idHash]);
        const current = rows[0] && sessionOf(rows[0]);
        if (!current || !stale(current)) return current;
        const next = await renew(current);
        const [updated] = await manager.query<[SessionRow[], number]>(
          `UPDATE browser_sessions SET sealed_tokens = $2, access_expires_at = $3, version = version + 1 WHERE id_hash = $1 RETURNING ${COLUMNS}`,
          [idHash, next.sealedTokens, next.accessExpiresAt],
        );
        return sessionOf(updated[0]);
      }),
    );
    if (!renewed) this.remembered.delete(idHash);
    else if (this.channel.live) this.remembered.set(idHash, renewed);
    return renewed;
  }

  async end(idHash: string): Promise<StoredSession | undefined> {
    const ended = await this.endWhere('id_hash = $1', [idHash]);
    return ended[0];
  }

  endAll(where: { issuer: string; endUser?: string; sidHash?: string }): Promise<StoredSession[]> {
    // A logout token that names the provider's session ends the sessions made in it (of its user,
    // when it names one too); one that names only a user ends all of theirs.
    if (where.sidHash !== undefined) {
      return this.endWhere('issuer = $1 AND sid_hash = $2 AND ($3::uuid IS NULL OR end_user = $3::uuid)', [where.issuer, where.sidHash, where.endUser ?? null]);
    }
    if (where.endUser === undefined) return Promise.resolve([]);
    return this.endWhere('issuer = $1 AND end_user = $2', [where.issuer, where.endUser]);
  }

  private async endWhere(condition: string, parameters: unknown[]): Promise<StoredSession[]> {
    const rows = await unavailableOnOutage(() =>
      this.dataSource.transaction(async (manager: EntityManager) => {
        const [deleted] = await manager.query<[SessionRow[], number]>(`DELETE FROM browser_sessions WHERE ${condition} RETURNING ${COLUMNS}`, parameters);
        // Delivered on commit, to every replica (this one too).
        if (deleted.length > 0) await manager.query(`SELECT pg_notify('${BROWSER_SESSIONS_ENDED}', '')`);
        return deleted;
      }),
    );
    for (const row of rows) this.remembered.delete(row.id_hash);
    return rows.map(sessionOf);
  }

  private remember(row: SessionRow | undefined): StoredSession | undefined {
    if (!row) return undefined;
    const session = sessionOf(row);
    if (this.channel.live) this.remembered.set(session.idHash, session);
    return session;
  }

  onApplicationBootstrap(): void {
    this.sweeper = startPeriodicTask('BrowserSessionSweep', SWEEP_EVERY_MS, SWEEP_EVERY_MS, async () => {
      await this.dataSource.query('DELETE FROM browser_logins WHERE expires_at < now()');
      await this.dataSource.query(`DELETE FROM browser_sessions WHERE expires_at < now() OR last_seen_at < now() - make_interval(secs => $1)`, [
        this.idleTimeoutSeconds,
      ]);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sweeper?.stop();
  }
}
