import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { SystemClock } from '../../src/common/domain/clock.port';
import { AuditSealer } from '../../src/audit/seal/domain/audit-sealer.service';
import { CheckpointStatement, encodeManifest, merkleRootOf, sha256, statementText, ZERO_HEAD } from '../../src/audit/seal/domain/audit-seal';
import { EVENT_HASH, ISO_US } from '../../src/audit/seal/persistence/event-hash.sql';
import { PostgresAuditSealRepository } from '../../src/audit/seal/persistence/postgres-audit-seal.repository';
import { Ed25519CheckpointSigner, Ed25519TrustedKeys, keyIdOf } from '../../src/audit/seal/signing/audit-signing-keys';
import { migrateAsOwner, protectionOf } from '../../src/database/database-roles';
import { Sql } from '../../src/database/sql';
import { dataSourceOptions } from '../../src/database/typeorm-options';
import { createTestDatabase, TestDatabase } from '../support/database';
import { waitFor } from '../support/wait-for';

/** The newest checkpoint's columns the next one must follow. */
interface ChainEnd {
  readonly seq: string;
  readonly head: Buffer;
  readonly end_tx: string;
  readonly end_id: string;
}

/**
 * What the service's own role (DATABASE_URL, in every pod) can do to the audit log and to its
 * callers, on a real PostgreSQL: an insider with that URL tries what a review reproduced.
 */
describe('the service’s database role, as an insider would use it', () => {
  let database: TestDatabase;
  let service: DataSource;
  let owner: Client;
  const key = generateKeyPairSync('ed25519');
  let sealer: AuditSealer;

  const asService = <T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> => service.query(sql, params);
  const asOwner = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => (await owner.query(sql, params)).rows as T[];
  const count = async (where: string) => (await asOwner<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events WHERE ${where}`))[0].n;
  /** The newest checkpoint: where the chain ends. */
  const chainEnd = async () => (await asOwner<ChainEnd>('SELECT seq::text, head, end_tx::text, end_id FROM audit_checkpoints ORDER BY seq DESC LIMIT 1'))[0];
  /** A statement that follows `head` (the next number, its head as previous, starting where it ends): a seal covering nothing, unless `fields` say otherwise. */
  const statementAfter = (head: ChainEnd, fields: Partial<CheckpointStatement> = {}): CheckpointStatement => ({
    v: 1,
    seq: Number(head.seq) + 1,
    kind: 'seal',
    sealed_at: new Date().toISOString(),
    prev_head: head.head.toString('hex'),
    digest: 1,
    after: { tx: head.end_tx, id: head.end_id },
    end: { tx: head.end_tx, id: head.end_id },
    events: 0,
    first_occurred_at: null,
    last_occurred_at: null,
    manifest_sha256: null,
    purge: null,
    ...fields,
  });
  /**
   * Seals every event, as the sealer would in time: it seals only events no transaction still
   * running on the cluster (another test's, say) could precede, so it may take more than one round.
   */
  const sealAll = () =>
    waitFor(
      async () => {
        await sealer.sealPending();
        const [{ n }] = await asOwner<{ n: number }>(
          `SELECT count(*)::int AS n FROM audit_events e WHERE NOT EXISTS (SELECT 1 FROM audit_checkpoints c WHERE (e.tx, e.id) <= (c.end_tx, c.end_id))`,
        );
        return n === 0;
      },
      { timeoutMs: 30_000, what: 'every event to be sealed' },
    );
  /** Signed with the service's own key, as a holder of it would: what the database checks is the rest. */
  const appendAsService = (statement: object, manifest: Buffer | null = null) => {
    const text = JSON.stringify(statement);
    return asService('SELECT append_audit_checkpoint($1, $2, $3, $4)', [text, keyIdOf(key.publicKey), sign(null, Buffer.from(text), key.privateKey), manifest]);
  };

  beforeAll(async () => {
    // The sealer logs each checkpoint: not this test's subject.
    Logger.overrideLogger(false);
    database = await createTestDatabase();
    service = await new DataSource(dataSourceOptions(database.url, { poolSize: 2 })).initialize();
    await migrateAsOwner(service, database.ownerUrl, { auditRetentionDays: 400 });
    owner = new Client({ connectionString: database.ownerUrl });
    await owner.connect();
    sealer = new AuditSealer(
      new PostgresAuditSealRepository(Sql.of(service)),
      new Ed25519CheckpointSigner(key.privateKey),
      new Ed25519TrustedKeys([key.publicKey]),
      new SystemClock(),
    );

    // History from before the retention floor (imported by the owner: the service cannot date an event), then ten of today's events.
    for (const days of [500, 450]) {
      await asOwner(
        `INSERT INTO audit_events (id, occurred_at, request_id, operation, phase) VALUES ($1, now() - make_interval(days => $2), 'old', 'balance.read', 'succeeded')`,
        [randomUUID(), days],
      );
    }
    await sealAll();
    for (let i = 0; i < 10; i += 1) {
      await asService(`INSERT INTO audit_events (id, request_id, operation, phase) VALUES ($1, 'today', 'balance.read', 'succeeded')`, [randomUUID()]);
    }
    await sealAll();
  });
  afterAll(async () => {
    await owner?.end();
    await service?.destroy();
    await database?.drop();
  });

  it('when it inserts a checkpoint row itself (the forged seq -1 covering everything), then the database refuses', async () => {
    const [head] = await asOwner<{ end_tx: string; end_id: string }>('SELECT end_tx::text, end_id FROM audit_checkpoints ORDER BY seq DESC LIMIT 1');

    await expect(
      asService(
        `INSERT INTO audit_checkpoints (seq, kind, sealed_at, end_tx, end_id, events, last_occurred_at, statement, head, key_id, signature)
         VALUES (-1, 'seal', now(), $1, $2, 12, '2000-01-01', '{}', '\\x00', 'forged', '\\x00')`,
        ['9223372036854775806', head.end_id],
      ),
    ).rejects.toThrow(/permission denied for table audit_checkpoints/);
    await expect(asService(`INSERT INTO audit_manifests (seq, entries) VALUES (-1, '\\x00')`)).rejects.toThrow(/permission denied/);
    await expect(asService(`UPDATE audit_policy SET retention_days = 365`)).rejects.toThrow(/permission denied/);
  });

  it('when it appends a checkpoint out of sequence, off the chain, or other than the events it covers, then the owner’s function refuses each', async () => {
    const head = await chainEnd();
    const next = statementAfter(head, {
      end: { tx: '9223372036854775806', id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' },
      events: 12,
      first_occurred_at: '2000-01-01T00:00:00.000000Z',
      last_occurred_at: '2000-01-01T00:00:00.000000Z',
    });

    await expect(appendAsService({ ...next, seq: -1 })).rejects.toThrow(/out of sequence/);
    await expect(appendAsService({ ...next, seq: 1, prev_head: ZERO_HEAD })).rejects.toThrow(/out of sequence/);
    await expect(appendAsService({ ...next, prev_head: ZERO_HEAD })).rejects.toThrow(/does not follow the chain/);
    await expect(appendAsService({ ...next, after: { tx: '0', id: '00000000-0000-0000-0000-000000000000' } })).rejects.toThrow(
      /does not start where the chain ends/,
    );
    await expect(appendAsService(next)).rejects.toThrow(/not settled/);
    await expect(appendAsService({ ...next, kind: 'purge', end: next.after, events: 0 }, Buffer.alloc(48))).rejects.toThrow(/covers no events/);
    await expect(appendAsService({ ...next, kind: 'other' })).rejects.toThrow(/no known kind/);
    await expect(asService('SELECT append_audit_checkpoint($1, $2, $3, $4)', ['not json', 'forged', Buffer.alloc(64), null])).rejects.toThrow(
      /one the sealer writes/,
    );
    expect(await asOwner('SELECT seq FROM audit_checkpoints WHERE seq > $1', [head.seq])).toEqual([]);
  });

  it('when it writes the log’s tree itself, or appends a checkpoint naming another tree than the checkpoints before it, or none once it has begun, then the database refuses; naming the right one, the owner’s trigger adds its head', async () => {
    await asService(`INSERT INTO audit_events (id, request_id, operation, phase) VALUES ($1, 'tree', 'balance.read', 'succeeded')`, [randomUUID()]);
    const store = new PostgresAuditSealRepository(Sql.of(service));
    const head = await chainEnd();
    const { batch, log } = await waitFor(
      async () => {
        const found = await store.underSealLock(true, async (scope) => ({
          batch: await scope.settledEventsAfter({ tx: head.end_tx, id: head.end_id }, 10),
          log: await scope.logTree(),
        }));
        return found?.batch ? { batch: found.batch, log: found.log } : undefined;
      },
      { timeoutMs: 30_000, what: 'the new event to settle' },
    );
    const { manifest } = batch;
    const next = statementAfter(head, {
      v: 3,
      end: batch.end,
      events: batch.events,
      first_occurred_at: batch.firstOccurredAt,
      last_occurred_at: batch.lastOccurredAt,
      manifest_sha256: sha256(manifest).toString('hex'),
      merkle_root: merkleRootOf(manifest),
      log_size: log.size,
      log_root: log.root,
    });
    const appendText = (text: string) =>
      asService('SELECT append_audit_checkpoint($1, $2, $3, $4)', [text, keyIdOf(key.publicKey), sign(null, Buffer.from(text), key.privateKey), manifest]);
    const append = (statement: CheckpointStatement) => appendText(statementText(statement));
    const olderVersion = statementText({ ...next, v: 2 });

    await expect(asService(`INSERT INTO audit_log_tree (leaf, seq, nodes) VALUES (99, 99, $1)`, [Buffer.alloc(32)])).rejects.toThrow(/permission denied/);
    await expect(append({ ...next, log_root: ZERO_HEAD })).rejects.toThrow(/does not name the tree of the checkpoints before it/);
    await expect(append({ ...next, log_size: log.size + 1 })).rejects.toThrow(/does not name the tree of the checkpoints before it/);
    // Once the tree has begun (the sealer's checkpoints above), an older statement would stay out of it: refused, with or without a tree of its own.
    await expect(appendText(olderVersion)).rejects.toThrow(/requires version 3/);
    await expect(appendText(olderVersion.replace(/}$/, `,"log_size":${log.size},"log_root":"${log.root}"}`))).rejects.toThrow(/requires version 3/);
    await expect(appendText(statementText(next).replace('"v":3', '"v":"3"'))).rejects.toThrow(/names no statement version/);
    await append(next);
    const [leaf] = await asOwner<{ leaf: string; seq: string; nodes: Buffer }>(
      'SELECT leaf::text, seq::text, nodes FROM audit_log_tree ORDER BY leaf DESC LIMIT 1',
    );
    expect([leaf.leaf, leaf.seq]).toEqual([String(log.size), String(next.seq)]);
    expect(leaf.nodes.subarray(0, 32)).toEqual(
      createHash('sha256')
        .update(Buffer.from([0]))
        .update(sha256(statementText(next)))
        .digest(),
    );
    await expect(asService(`UPDATE audit_log_tree SET nodes = $1`, [Buffer.alloc(32)])).rejects.toThrow(/permission denied/);
  });

  it('when the sealer reads the settled events, then it gets their manifest in seal order, when the first and last occurred and where they end, as read event by event, and at most as many as it asked', async () => {
    // Four events in one transaction, written in the reverse of their seal order (by id within it),
    // so that the first in seal order occurred last; then one more in a transaction of its own.
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()].sort().reverse();
    await service.transaction(async (manager) => {
      for (const id of ids) {
        await manager.query(`INSERT INTO audit_events (id, request_id, operation, phase) VALUES ($1, 'batch', 'balance.read', 'succeeded')`, [id]);
      }
    });
    await asService(`INSERT INTO audit_events (id, request_id, operation, phase) VALUES ($1, 'batch', 'customer.create', 'succeeded')`, [randomUUID()]);
    const store = new PostgresAuditSealRepository(Sql.of(service));
    const head = await chainEnd();
    const after = { tx: head.end_tx, id: head.end_id };
    const readAfter = (position: { tx: string; id: string }, limit: number) => store.underSealLock(true, (scope) => scope.settledEventsAfter(position, limit));
    try {
      const all = await waitFor(
        async () => {
          const batch = await readAfter(after, 10);
          return batch && batch.events >= ids.length + 1 ? batch : undefined;
        },
        { timeoutMs: 30_000, what: 'the new events to settle' },
      );
      const four = await readAfter(after, 4);

      // Event by event, as the owner, in seal order: what the batch must add up to.
      const rows = await asOwner<{ id: string; tx: string; hash: Buffer; occurred_at: string }>(
        `SELECT e.id, e.tx::text AS tx, ${EVENT_HASH} AS hash, ${ISO_US} AS occurred_at FROM audit_events e
          WHERE (e.tx, e.id) > ($1::bigint, $2::uuid) ORDER BY e.tx, e.id LIMIT $3`,
        [after.tx, after.id, all.events],
      );
      // The test's own premise: within the transaction, seal order is not the order the events occurred in.
      expect(rows.slice(0, 4).map((row) => row.id)).toEqual([...ids].reverse());
      expect(rows[0].occurred_at > rows[3].occurred_at).toBe(true);
      const expected = (events: typeof rows) => ({
        events: events.length,
        manifest: encodeManifest(events),
        firstOccurredAt: events.map((row) => row.occurred_at).sort()[0],
        lastOccurredAt: events.map((row) => row.occurred_at).sort()[events.length - 1],
        end: { tx: events[events.length - 1].tx, id: events[events.length - 1].id },
      });
      expect(rows).toHaveLength(all.events);
      expect(all).toEqual(expected(rows));
      expect(four).toEqual(expected(rows.slice(0, 4)));
    } finally {
      // Sealed whatever happened above: the tests after this one start where the chain ends.
      await sealAll();
    }
    const sealed = await chainEnd();
    expect(await readAfter({ tx: sealed.end_tx, id: sealed.end_id }, 10)).toBeUndefined();
  });

  it('when a checkpoint claims the settled events are fewer or older than they are, then it is refused', async () => {
    await asService(`INSERT INTO audit_events (id, request_id, operation, phase) VALUES ($1, 'claimed', 'balance.read', 'succeeded')`, [randomUUID()]);
    const [row] = await asOwner<{ id: string; tx: string; at: string }>(
      `SELECT id, tx::text, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at FROM audit_events WHERE request_id = 'claimed'`,
    );
    const head = await chainEnd();
    // Settled once no transaction still running on the cluster (another test's) could precede it.
    await waitFor(
      async () => (await asOwner<{ settled: boolean }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint > $1 AS settled', [row.tx]))[0].settled,
      {
        timeoutMs: 30_000,
        what: 'the event to settle',
      },
    );
    const manifest = Buffer.alloc(48);
    // Naming the log's tree as it stands, as every checkpoint after the sealer's first must.
    const [log] = await asService<{ size: number; root: string }>(
      `SELECT t.size::int AS size, encode(audit_log_root(t.size), 'hex') AS root FROM (SELECT coalesce(max(leaf) + 1, 0) AS size FROM audit_log_tree) t`,
    );
    const honest = statementAfter(head, {
      v: 3,
      merkle_root: merkleRootOf(manifest),
      log_size: log.size,
      log_root: log.root,
      end: { tx: row.tx, id: row.id },
      events: 1,
      first_occurred_at: row.at,
      last_occurred_at: row.at,
      manifest_sha256: createHash('sha256').update(manifest).digest('hex'),
    });

    await expect(appendAsService(JSON.parse(statementText({ ...honest, last_occurred_at: '2000-01-01T00:00:00.000000Z' })), manifest)).rejects.toThrow(
      /does not describe the events/,
    );
    await expect(appendAsService(JSON.parse(statementText({ ...honest, events: 0 })), manifest)).rejects.toThrow(/does not describe the events/);
    await expect(appendAsService(JSON.parse(statementText(honest)), Buffer.alloc(96))).rejects.toThrow(/no manifest matching/);
    // The same statement, told the truth, is taken: the refusals above were about what they claimed.
    await expect(appendAsService(JSON.parse(statementText(honest)), manifest)).resolves.toHaveLength(1);
    expect(Number((await chainEnd()).seq)).toBe(honest.seq);
  });

  it('when it writes occurred_at or tx itself, then the database refuses: it sets them', async () => {
    await expect(
      asService(
        `INSERT INTO audit_events (id, occurred_at, request_id, operation, phase) VALUES ($1, '2000-01-01', 'backdated', 'balance.read', 'succeeded')`,
        [randomUUID()],
      ),
    ).rejects.toThrow(/permission denied/);
    await expect(
      asService(`INSERT INTO audit_events (id, tx, request_id, operation, phase) VALUES ($1, 1, 'placed', 'balance.read', 'succeeded')`, [randomUUID()]),
    ).rejects.toThrow(/permission denied/);
    expect(await count(`request_id IN ('backdated', 'placed')`)).toBe(0);
  });

  it('when it asks for a purge younger than the configured retention, then the database refuses it, even above a year', async () => {
    await expect(asService(`SELECT * FROM purge_sealed_audit_events(now() - interval '380 days', 100000)`)).rejects.toThrow(/kept at least 400 days/);
    await expect(asService(`SELECT * FROM purge_sealed_audit_events(now() - interval '30 days', 100000)`)).rejects.toThrow(/kept at least 400 days/);
  });

  it('when the owner has set a retention under a year, then the database refuses the setting', async () => {
    await expect(asOwner('UPDATE audit_policy SET retention_days = 300')).rejects.toThrow(/audit_policy_retention_days_check/);
  });

  it('when it calls the purge on its own, with no signed purge checkpoint in the same transaction, then the database refuses to commit it and nothing goes', async () => {
    const before = await count('true');
    const checkpoints = await asOwner('SELECT seq FROM audit_checkpoints ORDER BY seq');

    await expect(asService(`SELECT * FROM purge_sealed_audit_events(now() - interval '400 days', NULL)`)).rejects.toThrow(
      /has no purge checkpoint: a purge commits only with its signed record/,
    );
    await expect(
      service.transaction(async (manager) => {
        await manager.query('SET CONSTRAINTS ALL IMMEDIATE');
        await manager.query(`SELECT * FROM purge_sealed_audit_events(now() - interval '400 days', 100000)`);
      }),
    ).rejects.toThrow(/has no purge checkpoint/);

    expect(await count('true')).toBe(before);
    expect(await asOwner('SELECT seq FROM audit_checkpoints ORDER BY seq')).toEqual(checkpoints);
  });

  it('when a purge checkpoint records no purge of its transaction, or another one than was made, then it is refused', async () => {
    const head = await chainEnd();
    const [first] = await asOwner<{ head: Buffer }>('SELECT head FROM audit_checkpoints ORDER BY seq LIMIT 1');
    const cutoff = new Date(Date.now() - 400 * 86_400_000);
    const record = { through_seq: 1, through_head: first.head.toString('hex'), events: 2, cutoff: cutoff.toISOString() };
    const before = await count('true');

    // No purge in its transaction.
    await expect(appendAsService(statementAfter(head, { kind: 'purge', purge: record }))).rejects.toThrow(/records no purge made in its transaction/);
    // A purge made, and a record of another: more events than went, or another checkpoint.
    for (const other of [
      { ...record, events: 3 },
      { ...record, through_head: head.head.toString('hex') },
    ]) {
      await expect(
        service.transaction(async (manager) => {
          const [made]: { purged: string }[] = await manager.query('SELECT purged FROM purge_sealed_audit_events($1, 100000)', [cutoff]);
          expect(Number(made.purged)).toBe(2);
          const text = JSON.stringify(statementAfter(head, { kind: 'purge', purge: other }));
          await manager.query('SELECT append_audit_checkpoint($1, $2, $3, $4)', [
            text,
            keyIdOf(key.publicKey),
            sign(null, Buffer.from(text), key.privateKey),
            null,
          ]);
        }),
      ).rejects.toThrow(/records no purge made in its transaction/);
    }
    expect(await count('true')).toBe(before);
  });

  it('when the sealer purges with the cutoff the service is allowed, then only events older than the retention go, whatever the checkpoints claim, and the purge is a signed checkpoint', async () => {
    const before = await count('true');

    const purged = await sealer.purgeOnce(new Date(Date.now() - 400 * 86_400_000), 100_000);

    expect(purged).toBe(2);
    expect(await count(`request_id = 'old'`)).toBe(0);
    expect(await count(`request_id = 'today'`)).toBe(10);
    expect(await count('true')).toBe(before - 2);
    const [newest] = await asOwner<{ kind: string; key_id: string }>('SELECT kind, key_id FROM audit_checkpoints ORDER BY seq DESC LIMIT 1');
    expect(newest.kind).toBe('purge');
    expect(await asOwner('SELECT * FROM audit_purges_unrecorded')).toEqual([]);
  });

  it('when every checkpoint is older than the retention, then the purge keeps the newest: the chain ends there, and the next checkpoint follows it', async () => {
    const other = await createTestDatabase();
    const otherService = await new DataSource(dataSourceOptions(other.url, { poolSize: 1 })).initialize();
    try {
      await migrateAsOwner(otherService, other.ownerUrl, { auditRetentionDays: 400 });
      const otherOwner = new Client({ connectionString: other.ownerUrl });
      await otherOwner.connect();
      const otherSealer = new AuditSealer(
        new PostgresAuditSealRepository(Sql.of(otherService)),
        new Ed25519CheckpointSigner(key.privateKey),
        new Ed25519TrustedKeys([key.publicKey]),
        new SystemClock(),
      );
      try {
        for (const days of [600, 500]) {
          await otherOwner.query(
            `INSERT INTO audit_events (id, occurred_at, request_id, operation, phase) VALUES ($1, now() - make_interval(days => $2), 'old', 'balance.read', 'succeeded')`,
            [randomUUID(), days],
          );
          // One checkpoint each, once the event has settled.
          await waitFor(async () => (await otherSealer.sealPending()) === 1, { timeoutMs: 30_000, what: 'the event to be sealed' });
        }

        const purged = await otherSealer.purgeOnce(new Date(Date.now() - 400 * 86_400_000), 100_000);

        expect(purged).toBe(1);
        const left = (await otherOwner.query<{ seq: string; kind: string }>('SELECT seq::text, kind FROM audit_checkpoints ORDER BY seq')).rows;
        expect(left).toEqual([
          { seq: '2', kind: 'seal' },
          { seq: '3', kind: 'purge' },
        ]);
      } finally {
        await otherOwner.end();
      }
    } finally {
      await otherService.destroy();
      await other.drop();
    }
  });

  it('when a transaction is held open before it writes an event, then the event is dated when it was written, not when the transaction began', async () => {
    const [{ held }] = await service.transaction(async (manager) => {
      await manager.query('SELECT now()');
      await manager.query('SELECT pg_sleep(1.2)');
      const id = randomUUID();
      await manager.query(`INSERT INTO audit_events (id, request_id, operation, phase) VALUES ($1, 'held', 'balance.read', 'succeeded')`, [id]);
      const rows: { held: number }[] = await manager.query(`SELECT extract(epoch FROM occurred_at - now())::float8 AS held FROM audit_events WHERE id = $1`, [
        id,
      ]);
      return rows;
    });

    expect(held).toBeGreaterThanOrEqual(1.1);
  });

  it('when it may create objects in the schema (PostgreSQL before 15), then a function it plants never stands in for a built-in in the owner’s functions, and start-up reports the role as not separated', async () => {
    const role = (await asService<{ role: string }>('SELECT current_user AS role'))[0].role;
    await asOwner(`GRANT CREATE ON SCHEMA public TO "${role}"`);
    // A session of its own: one that ran the owner's functions before keeps the plans it made then.
    const insider = new Client({ connectionString: database.url });
    await insider.connect();
    try {
      await insider.query(`
        CREATE FUNCTION public.convert_to(t text, enc text) RETURNS bytea LANGUAGE plpgsql AS $f$ BEGIN
          RAISE EXCEPTION 'the planted convert_to ran, as the owner';
        END $f$`);
      await insider.query(`CREATE TEMPORARY TABLE audit_checkpoints (seq bigint, head bytea, end_tx bigint, end_id uuid)`);
      const before = await count('true');

      await expect(
        insider.query('SELECT append_audit_checkpoint($1, $2, $3, $4)', [JSON.stringify({ seq: -1 }), 'planted', Buffer.alloc(64), null]),
      ).rejects.toThrow(/out of sequence/);

      expect(await count('true')).toBe(before);
      expect(await protectionOf(service)).toEqual({ separated: false, role, reason: expect.stringMatching(/may create objects in the audit log's schema/) });
    } finally {
      await insider.end();
      await asOwner('DROP FUNCTION IF EXISTS public.convert_to(text, text)');
      await asOwner(`REVOKE CREATE ON SCHEMA public FROM "${role}"`);
    }
    expect(await protectionOf(service)).toEqual({ separated: true, role });
  });

  it('when it tries to make itself an admin client, un-revoke one or change a role or tenant, then the database refuses each', async () => {
    const id = randomUUID();
    await asOwner(`INSERT INTO api_clients (id, name, role, tenant, token_hash, revoked_at) VALUES ($1, 'old-admin', 'admin', 'default', $2, now())`, [
      id,
      'a'.repeat(64),
    ]);

    await expect(
      asService(`INSERT INTO api_clients (id, name, role, tenant, token_hash) VALUES ($1, 'insider', 'admin', 'default', $2)`, [randomUUID(), 'b'.repeat(64)]),
    ).rejects.toThrow(/permission denied for table api_clients/);
    await expect(asService(`UPDATE api_clients SET revoked_at = NULL WHERE id = $1`, [id])).rejects.toThrow(/permission denied/);
    await expect(asService(`UPDATE api_clients SET role = 'admin', tenant = 'other'`)).rejects.toThrow(/permission denied/);
    await expect(asService(`DELETE FROM api_clients`)).rejects.toThrow(/permission denied/);
    expect(await asService('SELECT name FROM api_clients')).toEqual([{ name: 'old-admin' }]);
  });
});
