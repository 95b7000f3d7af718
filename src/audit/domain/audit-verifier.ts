import {
  CheckpointStatement,
  comparePositions,
  decodeManifest,
  headOf,
  ManifestEntry,
  ORIGIN,
  parseStatement,
  SealPosition,
  sha256,
  SignedCheckpoint,
  ZERO_HEAD,
} from './audit-seal';
import { AuditSealStore, StoredCheckpoint, TrustedKeys } from './audit-seal.port';
import { compareRange } from './range-comparison';

export type FindingKind =
  | 'altered'
  | 'deleted'
  | 'inserted'
  | 'reordered'
  | 'moved'
  | 'range_altered'
  | 'manifest_altered'
  | 'checkpoint_invalid'
  | 'checkpoint_unknown_key'
  | 'checkpoint_missing'
  | 'chain_broken'
  | 'external_mismatch'
  | 'truncated'
  | 'unsealed_too_long';

/** One thing verify found wrong. `checkpoint` and `position` say where (positions count from 1 in seal order). */
export interface Finding {
  readonly kind: FindingKind;
  readonly detail: string;
  readonly checkpoint?: number;
  readonly event_id?: string;
  readonly position?: number;
}

export interface VerifyReport {
  readonly intact: boolean;
  /** Events recomputed and found as sealed. */
  readonly events: number;
  readonly checkpoints: number;
  readonly newest?: { seq: number; kind: string; sealed_at: string; head: string; key_id: string; end: SealPosition };
  /** Events after the newest checkpoint (after none, when there is none): not sealed yet (the sealer covers them within seconds). */
  readonly unsealed: { count: number; oldest: Date | null };
  /** With `external`: the copies read, those whose signature verified and were compared, and those that could not be. */
  readonly external?: ExternalCount;
  /** The first MAX_LISTED findings, in order of place. */
  readonly findings: readonly Finding[];
  /** How many there are in all. */
  readonly findingCount: number;
}

export interface ExternalCount {
  readonly read: number;
  readonly verified: number;
  readonly ignored: number;
}

export interface VerifyOptions {
  /** Only the checkpoints whose events touch [from, to). */
  readonly from?: Date;
  readonly to?: Date;
  /** Checkpoints kept outside the database (from the service's log), to compare with; undefined for a copy that could not be read. */
  readonly external?: AsyncIterable<SignedCheckpoint | undefined>;
  /** Checkpoints' ranges recomputed at once. */
  readonly concurrency?: number;
  /**
   * Events may wait this long to be sealed (AUDIT_SEAL_MAX_LAG_SECONDS), as of `now`; one waiting
   * longer is a finding: the sealer stopped or lags, or the checkpoints that covered it are gone.
   */
  readonly maxUnsealed?: { readonly seconds: number; readonly now: Date };
}

const PAGE = 1000;
const EVENTS_PAGE = 10_000;
const MAX_LISTED = 1000;

interface Checked {
  readonly row: StoredCheckpoint;
  readonly statement: CheckpointStatement;
}

/**
 * `npm run audit:verify`: recomputes every event's hash and every checkpoint's chain link and
 * signature, and names what differs. Trusts only the public keys it is given: the database is
 * what it checks, not what it believes.
 */
export class AuditVerifier {
  constructor(
    private readonly store: AuditSealStore,
    private readonly keys: TrustedKeys,
  ) {}

  async verify(options: VerifyOptions = {}): Promise<VerifyReport> {
    const findings: Finding[] = [];
    const windowed = options.from !== undefined || options.to !== undefined;
    const purges = (await this.store.purgeCheckpoints()).map((row) => parseStatement(row.statement)).filter((s): s is CheckpointStatement => s !== undefined);
    const heads = new Map<number, string>();
    const deleted = new Map<string, Finding>();
    const inserted = new Map<string, Finding>();
    let events = 0;
    let count = 0;
    let previous: Checked | undefined;
    let newest: StoredCheckpoint | undefined;
    const running = new Set<Promise<void>>();
    const concurrency = Math.max(1, options.concurrency ?? 4);

    const checkRange = async (checked: Checked): Promise<void> => {
      const result = await this.checkRange(checked, findings, deleted, inserted);
      events += result;
    };

    for (let afterSeq = 0; ;) {
      const page = await this.store.checkpointsAfter(afterSeq, PAGE, { from: options.from, to: options.to });
      for (const row of page) {
        count++;
        newest = row;
        if (options.external) heads.set(row.seq, row.head);
        const checked = this.checkCheckpoint(row, findings);
        if (count === 1) {
          if (!windowed) await this.checkStart(row, checked?.statement, purges, findings, inserted);
        } else if (previous === undefined) {
          // The one before could not be trusted (reported): this one's link to it cannot be checked.
        } else if (row.seq !== previous.row.seq + 1) {
          if (!windowed)
            findings.push({
              kind: 'checkpoint_missing',
              checkpoint: row.seq,
              detail: `checkpoints ${previous.row.seq + 1}–${row.seq - 1} are missing between #${previous.row.seq} and #${row.seq}`,
            });
        } else if (checked) {
          if (checked.statement.prev_head !== previous.row.head) {
            findings.push({
              kind: 'chain_broken',
              checkpoint: row.seq,
              detail: `checkpoint #${row.seq} does not name #${previous.row.seq}'s head as its previous`,
            });
          }
          if (comparePositions(checked.statement.after, previous.statement.end) !== 0) {
            findings.push({ kind: 'chain_broken', checkpoint: row.seq, detail: `checkpoint #${row.seq} does not start where #${previous.row.seq} ends` });
          }
        }
        if (checked) {
          previous = checked;
          if (checked.statement.kind === 'seal') {
            const task = checkRange(checked).finally(() => running.delete(task));
            running.add(task);
            if (running.size >= concurrency) await Promise.race(running);
          }
        } else {
          previous = undefined;
        }
      }
      if (page.length < PAGE) break;
      afterSeq = page[page.length - 1].seq;
    }
    await Promise.all(running);

    for (const [id, gone] of deleted) {
      const arrived = inserted.get(id);
      if (!arrived) continue;
      inserted.delete(id);
      deleted.delete(id);
      findings.push({
        kind: 'moved',
        event_id: id,
        checkpoint: gone.checkpoint,
        position: gone.position,
        detail: `event ${id}, sealed by #${gone.checkpoint} at position ${gone.position}, ${arrived.detail.replace(/^event \S+ /, 'is now ')}`,
      });
    }
    findings.push(...deleted.values(), ...inserted.values());

    const external = options.external ? await this.compareExternal(options.external, heads, newest, purges, findings) : undefined;

    const newestStatement = newest ? parseStatement(newest.statement) : undefined;
    // With no checkpoint at all, every event is unsealed: all checkpoints deleted must not look like an empty chain.
    const unsealed = windowed ? { count: 0, oldest: null } : await this.store.eventsAfter(newest ? (newestStatement?.end ?? newest.end) : ORIGIN);
    const bound = options.maxUnsealed;
    if (bound && unsealed.oldest && bound.now.getTime() - unsealed.oldest.getTime() > bound.seconds * 1000) {
      findings.push({
        kind: 'unsealed_too_long',
        checkpoint: newest?.seq,
        detail:
          `${unsealed.count} events after ${newest ? `checkpoint #${newest.seq}` : 'the start (there is no checkpoint)'} are not sealed, the oldest from ${unsealed.oldest.toISOString()}, ` +
          `longer than the ${bound.seconds} s they may wait (AUDIT_SEAL_MAX_LAG_SECONDS): the sealer stopped or lags, or the checkpoints that covered them were removed`,
      });
    }
    return {
      intact: findings.length === 0,
      events,
      checkpoints: count,
      newest: newest && {
        seq: newest.seq,
        kind: newest.kind,
        sealed_at: newestStatement?.sealed_at ?? '',
        head: newest.head,
        key_id: newest.keyId,
        end: newest.end,
      },
      unsealed,
      ...(external ? { external } : {}),
      findings: findings.sort(byPlace).slice(0, MAX_LISTED),
      findingCount: findings.length,
    };
  }

  /** The statement, its head, its signature and its columns; undefined when it cannot be trusted. */
  private checkCheckpoint(row: StoredCheckpoint, findings: Finding[]): Checked | undefined {
    const statement = parseStatement(row.statement);
    const invalid = (detail: string): undefined => {
      findings.push({ kind: 'checkpoint_invalid', checkpoint: row.seq, detail: `checkpoint #${row.seq}: ${detail}` });
      return undefined;
    };
    if (!statement) return invalid('its statement is not one the sealer writes');
    const valid = this.keys.verify(row.keyId, row.statement, row.signature);
    if (valid === undefined) {
      findings.push({
        kind: 'checkpoint_unknown_key',
        checkpoint: row.seq,
        detail: `checkpoint #${row.seq} is signed by key ${row.keyId}, which is not trusted (AUDIT_SIGNING_KEY, AUDIT_PUBLIC_KEYS)`,
      });
      return undefined;
    }
    if (!valid) return invalid('its signature does not verify: the statement was changed after signing');
    if (statement.seq !== row.seq || statement.kind !== row.kind || comparePositions(statement.end, row.end) !== 0)
      return invalid('its columns differ from its signed statement');
    if (headOf(row.statement) !== row.head) return invalid('its stored head is not the hash of its statement');
    return { row, statement };
  }

  /** The oldest checkpoint: the genesis, or one whose predecessors a signed purge removed. */
  private async checkStart(
    row: StoredCheckpoint,
    statement: CheckpointStatement | undefined,
    purges: CheckpointStatement[],
    findings: Finding[],
    inserted: Map<string, Finding>,
  ): Promise<void> {
    if (!statement) return;
    if (row.seq === 1) {
      if (statement.prev_head !== ZERO_HEAD || comparePositions(statement.after, ORIGIN) !== 0) {
        findings.push({ kind: 'chain_broken', checkpoint: 1, detail: 'checkpoint #1 does not start the chain' });
      }
    } else if (!purges.some((purge) => purge.purge?.through_seq === row.seq - 1 && purge.purge.through_head === statement.prev_head)) {
      findings.push({ kind: 'checkpoint_missing', checkpoint: row.seq, detail: `checkpoints 1–${row.seq - 1} are missing, and no signed purge removed them` });
    }
    for (const event of await this.store.eventsUpTo(statement.after, MAX_LISTED)) {
      inserted.set(event.id, {
        kind: 'inserted',
        event_id: event.id,
        checkpoint: row.seq,
        detail: `event ${event.id} is in the range purged before checkpoint #${row.seq}, where nothing may be`,
      });
    }
  }

  /** Recomputes one checkpoint's range; returns the events found as sealed. */
  private async checkRange({ row, statement }: Checked, findings: Finding[], deleted: Map<string, Finding>, inserted: Map<string, Finding>): Promise<number> {
    const now = await this.store.rangeDigest(row.seq, statement.after, statement.end);
    if (now.count === statement.events && now.digest === statement.manifest_sha256) {
      if (now.manifestDigest !== statement.manifest_sha256) {
        findings.push({
          kind: 'manifest_altered',
          checkpoint: row.seq,
          detail: `the manifest of checkpoint #${row.seq} was changed or removed (its events are intact)`,
        });
      }
      return now.count;
    }
    // Something differs: the events one by one, against the manifest, to name what.
    const found: ManifestEntry[] = [];
    for await (const page of this.store.eventsBetween(statement.after, statement.end, EVENTS_PAGE)) {
      for (const event of page) found.push({ id: event.id, hash: event.hash });
    }
    const stored = await this.store.manifest(row.seq);
    const sealed = stored && sha256(stored).toString('hex') === statement.manifest_sha256 ? decodeManifest(stored) : undefined;
    if (!sealed) {
      findings.push({
        kind: 'range_altered',
        checkpoint: row.seq,
        detail: `the events of checkpoint #${row.seq} differ from what it sealed, and its manifest was changed too, so they cannot be named`,
      });
      findings.push({ kind: 'manifest_altered', checkpoint: row.seq, detail: `the manifest of checkpoint #${row.seq} was changed or removed` });
      return 0;
    }
    const differences = compareRange(sealed, found);
    for (const event of differences.altered) {
      findings.push({
        kind: 'altered',
        event_id: event.id,
        checkpoint: row.seq,
        position: event.position,
        detail: `event ${event.id} (checkpoint #${row.seq}, position ${event.position}) was changed after it was sealed`,
      });
    }
    for (const event of differences.reordered) {
      findings.push({
        kind: 'reordered',
        event_id: event.id,
        checkpoint: row.seq,
        position: event.sealedPosition,
        detail: `event ${event.id} was sealed at position ${event.sealedPosition} of checkpoint #${row.seq} and is now at position ${event.foundPosition}`,
      });
    }
    for (const event of differences.deleted) {
      deleted.set(event.id, {
        kind: 'deleted',
        event_id: event.id,
        checkpoint: row.seq,
        position: event.position,
        detail: `event ${event.id} (checkpoint #${row.seq}, position ${event.position}) is gone`,
      });
    }
    for (const event of differences.inserted) {
      inserted.set(event.id, {
        kind: 'inserted',
        event_id: event.id,
        checkpoint: row.seq,
        position: event.position,
        detail: `event ${event.id} is in the range of checkpoint #${row.seq} (position ${event.position}), which never sealed it`,
      });
    }
    return found.length - differences.altered.length - differences.inserted.length - differences.reordered.length;
  }

  /**
   * The copy kept outside the database: each of its checkpoints must be in the database, unchanged,
   * or purged. A copy whose signature does not verify with a trusted key cannot vouch for anything:
   * it is counted as ignored, and the caller decides what none verified means.
   */
  private async compareExternal(
    external: AsyncIterable<SignedCheckpoint | undefined>,
    heads: Map<number, string>,
    newest: StoredCheckpoint | undefined,
    purges: CheckpointStatement[],
    findings: Finding[],
  ): Promise<ExternalCount> {
    const purgedThrough = Math.max(0, ...purges.map((purge) => purge.purge?.through_seq ?? 0));
    let beyond: number | undefined;
    let read = 0;
    let verified = 0;
    for await (const copy of external) {
      read++;
      if (!copy || this.keys.verify(copy.keyId, copy.statement, copy.signature) !== true || headOf(copy.statement) !== copy.head) continue;
      verified++;
      const head = heads.get(copy.seq);
      if (head === undefined) {
        if (newest === undefined || copy.seq > newest.seq) beyond = Math.max(beyond ?? 0, copy.seq);
        else if (copy.seq > purgedThrough)
          findings.push({ kind: 'checkpoint_missing', checkpoint: copy.seq, detail: `checkpoint #${copy.seq}, kept outside the database, is not in it` });
      } else if (head !== copy.head) {
        findings.push({
          kind: 'external_mismatch',
          checkpoint: copy.seq,
          detail: `checkpoint #${copy.seq} in the database differs from the copy kept outside it: it was replaced`,
        });
      }
    }
    if (beyond !== undefined) {
      findings.push({
        kind: 'truncated',
        checkpoint: beyond,
        detail: `the copy kept outside the database goes up to checkpoint #${beyond}, the database only to ${newest ? `#${newest.seq}` : 'none'}: the newest checkpoints were removed`,
      });
    }
    return { read, verified, ignored: read - verified };
  }
}

function byPlace(a: Finding, b: Finding): number {
  return (a.checkpoint ?? 0) - (b.checkpoint ?? 0) || (a.position ?? 0) - (b.position ?? 0);
}
