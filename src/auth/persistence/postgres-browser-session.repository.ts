import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { DataSource, EntityManager } from 'typeorm';
import { BackgroundWork } from '../../common/domain/background-work';
import { PeriodicTask, startPeriodicTask } from '../../common/runtime/periodic-task';
import { NotificationChannel, PostgresNotifications } from '../../database/postgres-notifications';
import { unavailableOnOutage } from '../../database/store-errors';
import { BrowserSessionStore, PendingLogin, StoredSession } from '../domain/browser-session-store.port';

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
export class PostgresBrowserSessionRepository extends BrowserSessionStore implements OnApplicationBootstrap, OnApplicationShutdown {
  // Nothing is remembered for more than 30 s, as a backstop behind NOTIFY (as client tokens are).
  private readonly remembered = new LRUCache<string, StoredSession>({ max: REMEMBERED_SESSIONS, ttl: REMEMBER_AT_MOST_MS });
  private readonly channel: NotificationChannel;
  /**
   * Bumped on every ending heard: a read that started before one must not be remembered after it
   * (it may hold a session that has just ended, which would then live on here for up to 30 s).
   */
  private generation = 0;
  private sweeper?: PeriodicTask;

  constructor(
    private readonly dataSource: DataSource,
    notifications: PostgresNotifications,
    /** Sessions unused this long are swept. */
    private readonly idleTimeoutSeconds: number,
    /** Whether this process sweeps them (the worker's, or the only process's). */
    private readonly background?: BackgroundWork,
  ) {
    super();
    this.channel = notifications.channel(BROWSER_SESSIONS_ENDED);
    this.channel.subscribe(() => {
      this.generation += 1;
      this.remembered.clear();
    });
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
    const generation = this.generation;
    const rows: SessionRow[] = await unavailableOnOutage(() => this.dataSource.query(`SELECT ${COLUMNS} FROM browser_sessions WHERE id_hash = $1`, [idHash]));
    return this.remember(rows[0], generation);
  }

  async touch(idHash: string, at: Date): Promise<void> {
    await unavailableOnOutage(() =>
      this.dataSource.query('UPDATE browser_sessions SET last_seen_at = greatest(last_seen_at, $2) WHERE id_hash = $1', [idHash, at]),
    );
    const known = this.remembered.get(idHash);
    if (known && known.lastSeenAt < at) this.remembered.set(idHash, { ...known, lastSeenAt: at });
  }

  async claimRenewal(idHash: string, version: number, leaseMs: number): Promise<boolean> {
    const [, claimed] = await unavailableOnOutage(() =>
      this.dataSource.query<[unknown[], number]>(
        `UPDATE browser_sessions SET renewal_claimed_until = now() + make_interval(secs => $3 / 1000.0)
          WHERE id_hash = $1 AND version = $2 AND (renewal_claimed_until IS NULL OR renewal_claimed_until < now())`,
        [idHash, version, leaseMs],
      ),
    );
    return claimed === 1;
  }

  async saveRenewal(idHash: string, version: number, renewed: { sealedTokens: string; accessExpiresAt: Date }): Promise<StoredSession | undefined> {
    const generation = this.generation;
    const [rows] = await unavailableOnOutage(() =>
      this.dataSource.query<[SessionRow[], number]>(
        `UPDATE browser_sessions SET sealed_tokens = $3, access_expires_at = $4, version = version + 1, renewal_claimed_until = NULL
          WHERE id_hash = $1 AND version = $2 RETURNING ${COLUMNS}`,
        [idHash, version, renewed.sealedTokens, renewed.accessExpiresAt],
      ),
    );
    if (!rows[0]) {
      this.remembered.delete(idHash);
      return undefined;
    }
    return this.remember(rows[0], generation);
  }

  async releaseRenewal(idHash: string, version: number): Promise<void> {
    await unavailableOnOutage(() =>
      this.dataSource.query('UPDATE browser_sessions SET renewal_claimed_until = NULL WHERE id_hash = $1 AND version = $2', [idHash, version]),
    );
  }

  async end(idHash: string): Promise<StoredSession | undefined> {
    const ended = await this.endWhere('id_hash = $1', [idHash]);
    return ended[0];
  }

  async endAll(
    where: { issuer: string; endUser?: string; sidHash?: string },
    once?: { key: string; expiresAt: Date },
  ): Promise<{ ended: StoredSession[]; alreadyUsed: boolean }> {
    // A logout token that names the provider's session ends the sessions made in it (of its user,
    // when it names one too); one that names only a user ends all of theirs.
    const [condition, parameters] =
      where.sidHash !== undefined
        ? ['issuer = $1 AND sid_hash = $2 AND ($3::uuid IS NULL OR end_user = $3::uuid)', [where.issuer, where.sidHash, where.endUser ?? null]]
        : where.endUser !== undefined
          ? ['issuer = $1 AND end_user = $2', [where.issuer, where.endUser]]
          : [undefined, []];
    let alreadyUsed = false;
    const ended = await this.endWhere(condition, parameters, async (manager) => {
      if (!once) return true;
      // The key is recorded in the same transaction as the ending: should the ending fail, it is not recorded.
      const used: unknown[] = await manager.query(
        `INSERT INTO dpop_proofs (key, expires_at) VALUES ($1, $2)
          ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE dpop_proofs.expires_at < now() RETURNING key`,
        [once.key, once.expiresAt],
      );
      alreadyUsed = used.length === 0;
      return !alreadyUsed;
    });
    return { ended, alreadyUsed };
  }

  async listOf(endUser: string): Promise<StoredSession[]> {
    const rows: SessionRow[] = await unavailableOnOutage(() =>
      this.dataSource.query(`SELECT ${COLUMNS} FROM browser_sessions WHERE end_user = $1 AND expires_at > now() ORDER BY created_at DESC LIMIT 100`, [endUser]),
    );
    return rows.map(sessionOf);
  }

  endAllOf(endUser: string): Promise<StoredSession[]> {
    return this.endWhere('end_user = $1', [endUser]);
  }

  private async endWhere(
    condition: string | undefined,
    parameters: unknown[],
    first: (manager: EntityManager) => Promise<boolean> = () => Promise.resolve(true),
  ): Promise<StoredSession[]> {
    const rows = await unavailableOnOutage(() =>
      this.dataSource.transaction(async (manager: EntityManager) => {
        if (!(await first(manager)) || condition === undefined) return [];
        const [deleted] = await manager.query<[SessionRow[], number]>(`DELETE FROM browser_sessions WHERE ${condition} RETURNING ${COLUMNS}`, parameters);
        // Delivered on commit, to every replica (this one too).
        if (deleted.length > 0) await manager.query(`SELECT pg_notify('${BROWSER_SESSIONS_ENDED}', '')`);
        return deleted;
      }),
    );
    for (const row of rows) this.remembered.delete(row.id_hash);
    return rows.map(sessionOf);
  }

  /** The row as a session, remembered only if no ending was heard since the read began (`generation`). */
  private remember(row: SessionRow | undefined, generation: number): StoredSession | undefined {
    if (!row) return undefined;
    const session = sessionOf(row);
    if (this.channel.live && generation === this.generation) this.remembered.set(session.idHash, session);
    return session;
  }

  onApplicationBootstrap(): void {
    if (this.background && !this.background.runs) return;
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
