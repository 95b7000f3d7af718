import { Injectable } from '@nestjs/common';
import { GroupCommit } from '../../../database/group-commit';
import { Query, Sql } from '../../../database/sql';
import { unavailableOnOutage } from '../../../database/store-errors';
import { EventDigestRow, SealPosition, SettledBatch, SignedCheckpoint } from '../domain/audit-seal';
import { AuditSealStore, SealScope, StoredCheckpoint } from '../domain/audit-seal.port';
import type { CommittedEvent } from '../../trail/domain/audit-log.port';
import { isAuditQuery } from '../../persistence/audit-query-key.sql';
import { EVENT_HASH, isoUsOf, RECEIPT_COLUMNS, ReceiptRow, toCommittedEvent } from './event-hash.sql';

/** An arbitrary constant: the advisory lock that lets one process at a time extend the chain. */
export const SEAL_LOCK_KEY = 7_204_118_554;

/** A manifest entry: the id's 16 bytes and the hash. */
const ENTRY = `pg_catalog.uuid_send(e.id) || ${EVENT_HASH}`;

/** How many leaves the log's tree holds: its highest leaf, plus one. */
const LOG_TREE_SIZE = 'SELECT coalesce(max(t.leaf) + 1, 0) AS size FROM audit_log_tree t';

const CHECKPOINT_COLUMNS = `c.seq::int AS seq, c.kind, c.statement, c.head, c.key_id, c.signature, c.end_tx::text AS end_tx, c.end_id`;

interface CheckpointRow {
  seq: number;
  kind: string;
  statement: string;
  head: Buffer;
  key_id: string;
  signature: Buffer;
  end_tx: string;
  end_id: string;
}

function toCheckpoint(row: CheckpointRow): StoredCheckpoint {
  return {
    seq: row.seq,
    kind: row.kind,
    statement: row.statement,
    head: row.head.toString('hex'),
    keyId: row.key_id,
    signature: row.signature.toString('base64'),
    end: { tx: row.end_tx, id: row.end_id },
  };
}

class PgSealScope implements SealScope {
  constructor(private readonly query: Query) {}

  async newestCheckpoint(): Promise<StoredCheckpoint | undefined> {
    const [row] = await this.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints c ORDER BY c.seq DESC LIMIT 1`);
    return row && toCheckpoint(row);
  }

  async settledEventsAfter(after: SealPosition, limit: number): Promise<SettledBatch | undefined> {
    // Every transaction with an id below the horizon has ended: none can still add an event there.
    const [{ horizon }] = await this.query<{ horizon: string }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon');
    // The manifest is put together here, in seal order: one value, not a row per event (SettledBatch).
    const [row] = await this.query<{ events: number; manifest: Buffer; first: string; last: string; end_tx: string; end_id: string }>(
      `WITH s AS MATERIALIZED (
         SELECT e.id, e.tx, e.occurred_at, ${ENTRY} AS entry
           FROM audit_events e
          WHERE (e.tx, e.id) > ($1::bigint, $2::uuid) AND e.tx < $3::bigint
          ORDER BY e.tx, e.id LIMIT $4)
       SELECT a.events, a.manifest, ${isoUsOf('a.first')} AS first, ${isoUsOf('a.last')} AS last, l.tx::text AS end_tx, l.id AS end_id
         FROM (SELECT count(*)::int AS events, string_agg(s.entry, ''::bytea ORDER BY s.tx, s.id) AS manifest,
                      min(s.occurred_at) AS first, max(s.occurred_at) AS last FROM s) a
        CROSS JOIN LATERAL (SELECT s.tx, s.id FROM s ORDER BY s.tx DESC, s.id DESC LIMIT 1) l`,
      [after.tx, after.id, horizon, limit],
    );
    // No events, no row (the LATERAL finds none to end at); said again here, where it is read.
    if (!row || row.events === 0) return undefined;
    return { events: row.events, manifest: row.manifest, firstOccurredAt: row.first, lastOccurredAt: row.last, end: { tx: row.end_tx, id: row.end_id } };
  }

  async logTree(): Promise<{ size: number; root: string }> {
    const [row] = await this.query<{ size: string; root: Buffer }>(`SELECT l.size::text AS size, audit_log_root(l.size) AS root FROM (${LOG_TREE_SIZE}) l`);
    return { size: Number(row.size), root: row.root.toString('hex') };
  }

  /**
   * Through the owner's append_audit_checkpoint: the service's role may not insert a checkpoint
   * itself. The database takes the columns from the statement, computes the head, and refuses a
   * checkpoint out of sequence, off the chain, or other than the events it covers.
   */
  async append(checkpoint: SignedCheckpoint, manifest?: Buffer): Promise<void> {
    await this.query('SELECT append_audit_checkpoint($1, $2, $3, $4)', [
      checkpoint.statement,
      checkpoint.keyId,
      Buffer.from(checkpoint.signature, 'base64'),
      manifest ?? null,
    ]);
  }

  async purgeSealed(cutoff: Date, maxEvents: number): Promise<{ throughSeq: number; throughHead: string; purged: number } | undefined> {
    const [row] = await this.query<{ through_seq: string; through_head: Buffer; purged: string }>(
      'SELECT through_seq, through_head, purged FROM purge_sealed_audit_events($1, $2)',
      [cutoff, maxEvents],
    );
    return row && { throughSeq: Number(row.through_seq), throughHead: row.through_head.toString('hex'), purged: Number(row.purged) };
  }
}

@Injectable()
export class PostgresAuditSealRepository extends AuditSealStore {
  /** Receipts asked for at the same moment read their events in one statement (by primary key). */
  private readonly receiptReads = new GroupCommit<string, CommittedEvent | undefined>((ids) => this.readCommittedEvents(ids), {
    maxBatch: 200,
    maxInFlight: 2,
    isRowError: () => false,
  });

  constructor(private readonly sql: Sql) {
    super();
  }

  async checkpoint(seq: number): Promise<StoredCheckpoint | undefined> {
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints c WHERE c.seq = $1`, [seq]),
    );
    return row && toCheckpoint(row);
  }

  async logTreeNodes(leaves: readonly number[]): Promise<ReadonlyMap<number, Buffer>> {
    if (leaves.length === 0) return new Map();
    const rows = await unavailableOnOutage(() =>
      this.sql.query<{ leaf: string; nodes: Buffer }>('SELECT t.leaf::text AS leaf, t.nodes FROM audit_log_tree t WHERE t.leaf = ANY($1::bigint[])', [leaves]),
    );
    return new Map(rows.map((row) => [Number(row.leaf), row.nodes]));
  }

  async logTreeSize(): Promise<number> {
    const [row] = await unavailableOnOutage(() => this.sql.query<{ size: string }>(`SELECT l.size::text AS size FROM (${LOG_TREE_SIZE}) l`, []));
    return Number(row.size);
  }

  receiptFacts(eventId: string): Promise<CommittedEvent | undefined> {
    return unavailableOnOutage(() => this.receiptReads.write(eventId));
  }

  private async readCommittedEvents(ids: string[]): Promise<(CommittedEvent | undefined)[]> {
    const rows = await this.sql.query<ReceiptRow>(`SELECT ${RECEIPT_COLUMNS} FROM audit_events e WHERE e.id = ANY($1::uuid[])`, [ids]);
    const byId = new Map(rows.map((row) => [row.id, toCommittedEvent(row)]));
    return ids.map((id) => byId.get(id.toLowerCase()));
  }

  async originalSuccess(tenant: string, reference: string, operation: string): Promise<CommittedEvent | undefined> {
    // Through the reference's index, newest first, past the searches of the audit log about it: a reference has a handful of events.
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<ReceiptRow>(
        `SELECT ${RECEIPT_COLUMNS} FROM audit_events e
          WHERE e.reference = $1 AND ${isAuditQuery()} IS FALSE AND e.operation = $2 AND e.tenant = $3 AND e.phase = 'succeeded' AND NOT e.replayed
            AND e.http_status BETWEEN 200 AND 299
          ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1`,
        [reference, operation, tenant],
      ),
    );
    return row && toCommittedEvent(row);
  }

  async underSealLock<T>(wait: boolean, work: (scope: SealScope) => Promise<T>): Promise<T | undefined> {
    return this.sql.transaction(async (query) => {
      if (wait) {
        await query('SELECT pg_advisory_xact_lock($1)', [SEAL_LOCK_KEY]);
      } else {
        const [{ locked }] = await query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [SEAL_LOCK_KEY]);
        if (!locked) return undefined;
      }
      return work(new PgSealScope(query));
    });
  }

  async newestCheckpoints(limit: number): Promise<StoredCheckpoint[]> {
    const rows = await unavailableOnOutage(() =>
      this.sql.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints c ORDER BY c.seq DESC LIMIT $1`, [limit]),
    );
    return rows.map(toCheckpoint);
  }

  async checkpointsAfter(afterSeq: number, limit: number, window: { from?: Date; to?: Date } = {}): Promise<StoredCheckpoint[]> {
    const rows = await this.sql.query<CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints c
        WHERE c.seq > $1
          AND ($3::timestamptz IS NULL OR c.last_occurred_at IS NULL OR c.last_occurred_at >= $3)
          AND ($4::timestamptz IS NULL OR c.first_occurred_at IS NULL OR c.first_occurred_at < $4)
        ORDER BY c.seq LIMIT $2`,
      [afterSeq, limit, window.from ?? null, window.to ?? null],
    );
    return rows.map(toCheckpoint);
  }

  async purgeCheckpoints(): Promise<StoredCheckpoint[]> {
    const rows = await this.sql.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints c WHERE c.kind = 'purge' ORDER BY c.seq`, []);
    return rows.map(toCheckpoint);
  }

  async progress(): Promise<{ newest: { seq: number; sealedAt: Date } | null; nextUnsealedAt: Date | null }> {
    const [row] = await this.sql.query<{ seq: number | null; sealed_at: Date | null; next_unsealed_at: Date | null }>(
      `SELECT c.seq::int AS seq, c.sealed_at,
              (SELECT e.occurred_at FROM audit_events e
                WHERE (e.tx, e.id) > (coalesce(c.end_tx, 0), coalesce(c.end_id, '00000000-0000-0000-0000-000000000000'::uuid))
                ORDER BY e.tx, e.id LIMIT 1) AS next_unsealed_at
         FROM (SELECT 1) AS one
         LEFT JOIN LATERAL (SELECT seq, sealed_at, end_tx, end_id FROM audit_checkpoints ORDER BY seq DESC LIMIT 1) c ON true`,
      [],
    );
    return {
      newest: row.seq === null || row.sealed_at === null ? null : { seq: row.seq, sealedAt: row.sealed_at },
      nextUnsealedAt: row.next_unsealed_at,
    };
  }

  async sealedEvent(tenant: string, eventId: string): Promise<{ position: SealPosition; checkpoint?: StoredCheckpoint & { manifest: Buffer } } | undefined> {
    const [event] = await unavailableOnOutage(() =>
      this.sql.query<{ tx: string; id: string }>(
        `SELECT e.tx::text AS tx, e.id FROM audit_events e WHERE e.id = $1 AND e.tenant = $2 AND e.caller_kind IN ('partner', 'end_user')`,
        [eventId, tenant],
      ),
    );
    if (!event) return undefined;
    const position = { tx: event.tx, id: event.id };
    // The first seal whose range ends at or after the event: its range holds it, when any does.
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<CheckpointRow & { entries: Buffer }>(
        `SELECT ${CHECKPOINT_COLUMNS}, COALESCE(m.entries, ''::bytea) AS entries FROM audit_checkpoints c LEFT JOIN audit_manifests m ON m.seq = c.seq
          WHERE c.kind = 'seal' AND (c.end_tx, c.end_id) >= ($1::bigint, $2::uuid)
          ORDER BY c.end_tx, c.end_id LIMIT 1`,
        [position.tx, position.id],
      ),
    );
    return row ? { position, checkpoint: { ...toCheckpoint(row), manifest: row.entries } } : { position };
  }

  async manifest(seq: number): Promise<Buffer | undefined> {
    const [row] = await this.sql.query<{ entries: Buffer }>('SELECT entries FROM audit_manifests WHERE seq = $1', [seq]);
    return row?.entries;
  }

  async *eventsBetween(after: SealPosition, through: SealPosition, pageSize: number): AsyncIterable<EventDigestRow[]> {
    let from = after;
    for (;;) {
      const rows = await this.sql.query<EventDigestRow>(
        `SELECT e.id, e.tx::text AS tx, ${EVENT_HASH} AS hash FROM audit_events e
          WHERE (e.tx, e.id) > ($1::bigint, $2::uuid) AND (e.tx, e.id) <= ($3::bigint, $4::uuid)
          ORDER BY e.tx, e.id LIMIT $5`,
        [from.tx, from.id, through.tx, through.id, pageSize],
      );
      if (rows.length > 0) yield rows;
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1];
      from = { tx: last.tx, id: last.id };
    }
  }

  async rangeDigest(seq: number, after: SealPosition, through: SealPosition): Promise<{ count: number; digest: string; manifestDigest?: string }> {
    const [row] = await this.sql.query<{ count: number; digest: Buffer; manifest: Buffer | null }>(
      `SELECT count(*)::int AS count, pg_catalog.sha256(coalesce(string_agg(${ENTRY}, ''::bytea ORDER BY e.tx, e.id), ''::bytea)) AS digest,
              (SELECT pg_catalog.sha256(m.entries) FROM audit_manifests m WHERE m.seq = $5) AS manifest
         FROM audit_events e
        WHERE (e.tx, e.id) > ($1::bigint, $2::uuid) AND (e.tx, e.id) <= ($3::bigint, $4::uuid)`,
      [after.tx, after.id, through.tx, through.id, seq],
    );
    return { count: row.count, digest: row.digest.toString('hex'), manifestDigest: row.manifest?.toString('hex') };
  }

  async eventsUpTo(position: SealPosition, limit: number): Promise<EventDigestRow[]> {
    return this.sql.query<EventDigestRow>(
      `SELECT e.id, e.tx::text AS tx, ${EVENT_HASH} AS hash FROM audit_events e
        WHERE (e.tx, e.id) <= ($1::bigint, $2::uuid) ORDER BY e.tx, e.id LIMIT $3`,
      [position.tx, position.id, limit],
    );
  }

  async eventsAfter(position: SealPosition): Promise<{ count: number; oldest: Date | null }> {
    const [row] = await this.sql.query<{ count: number; oldest: Date | null }>(
      'SELECT count(*)::int AS count, min(e.occurred_at) AS oldest FROM audit_events e WHERE (e.tx, e.id) > ($1::bigint, $2::uuid)',
      [position.tx, position.id],
    );
    return row;
  }
}
