import {
  CheckpointStatement,
  comparePositions,
  decodeManifest,
  headOf,
  ManifestEntry,
  ORIGIN,
  merkleRootMatches,
  parseStatement,
  SealPosition,
  sha256,
  SignedCheckpoint,
  ZERO_HEAD,
} from './audit-seal';
import { AuditSealStore, StoredCheckpoint, TrustedKeys } from './audit-seal.port';
import { LogFrontier, LogTreeIncomplete } from './log-tree';
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
  | 'log_tree_altered'
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

/**
 * A line of the copy that names a checkpoint and cannot be read as one: `not_json` (a line that is
 * not JSON, nor ends in the JSON a human-readable log line carries), `incomplete` (JSON without
 * every field a checkpoint has).
 */
export interface UnreadableCheckpoint {
  readonly unreadable: 'not_json' | 'incomplete';
}

export interface ExternalCount {
  readonly read: number;
  readonly verified: number;
  /** Read and not verified: the sum of the three below. */
  readonly ignored: number;
  readonly not_json: number;
  readonly incomplete: number;
  /** Read as a checkpoint whose signature no trusted key verifies, or whose head is not its statement's. */
  readonly unverified: number;
}

export interface VerifyOptions {
  /** Only the checkpoints whose events touch [from, to). */
  readonly from?: Date;
  readonly to?: Date;
  /** Checkpoints kept outside the database (from the service's log), to compare with, and the lines that named one and could not be read. */
  readonly external?: AsyncIterable<SignedCheckpoint | UnreadableCheckpoint>;
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

/** A leaf's row of the log's tree as the walk made it: the checkpoint whose head it is, and its nodes. */
interface ExpectedTreeRow {
  readonly seq: number;
  readonly nodes: Buffer;
}

/** What walking the chain of checkpoints came to. */
interface Walked {
  /** Events recomputed and found as sealed. */
  readonly events: number;
  readonly checkpoints: number;
  readonly newest?: StoredCheckpoint;
  /** Each checkpoint's head, by seq (for the comparison with the copy kept outside the database). */
  readonly heads: ReadonlyMap<number, string>;
}

/**
 * What verify finds, gathered as it goes. An event found gone from one place and present in
 * another is one finding, `moved`: deletions and insertions are held apart until the walk is over.
 */
export class Findings {
  private readonly found: Finding[] = [];
  private readonly gone = new Map<string, Finding>();
  private readonly arrived = new Map<string, Finding>();

  add(finding: Finding): void {
    this.found.push(finding);
  }

  deleted(finding: Finding & { readonly event_id: string }): void {
    this.gone.set(finding.event_id, finding);
  }

  inserted(finding: Finding & { readonly event_id: string }): void {
    this.arrived.set(finding.event_id, finding);
  }

  /** Pairs each deleted event with its insertion elsewhere, as a move; the rest stay what they are. */
  settle(): void {
    for (const [id, gone] of this.gone) {
      const arrived = this.arrived.get(id);
      if (!arrived) continue;
      this.arrived.delete(id);
      this.gone.delete(id);
      this.found.push({
        kind: 'moved',
        event_id: id,
        checkpoint: gone.checkpoint,
        position: gone.position,
        detail: `event ${id}, sealed by #${gone.checkpoint} at position ${gone.position}, ${arrived.detail.replace(/^event \S+ is /, 'is now ')}`,
      });
    }
    this.found.push(...this.gone.values(), ...this.arrived.values());
    this.gone.clear();
    this.arrived.clear();
  }

  get count(): number {
    return this.found.length + this.gone.size + this.arrived.size;
  }

  /** The first `max`, in order of place. */
  listed(max: number): Finding[] {
    return [...this.found].sort(byPlace).slice(0, max);
  }
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
    const findings = new Findings();
    const windowed = options.from !== undefined || options.to !== undefined;
    const purges = (await this.store.purgeCheckpoints()).map((row) => parseStatement(row.statement)).filter((s): s is CheckpointStatement => s !== undefined);
    const walked = await this.walkChain(options, windowed, purges, findings);
    findings.settle();
    const external = options.external ? await this.compareExternal(options.external, walked.heads, walked.newest, purges, findings) : undefined;
    const newest = walked.newest;
    const newestStatement = newest ? parseStatement(newest.statement) : undefined;
    // With no checkpoint at all, every event is unsealed: all checkpoints deleted must not look like an empty chain.
    const unsealed = windowed ? { count: 0, oldest: null } : await this.store.eventsAfter(newest ? (newestStatement?.end ?? newest.end) : ORIGIN);
    this.checkUnsealed(unsealed, newest, options.maxUnsealed, findings);
    return {
      intact: findings.count === 0,
      events: walked.events,
      checkpoints: walked.checkpoints,
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
      findings: findings.listed(MAX_LISTED),
      findingCount: findings.count,
    };
  }

  /**
   * Every checkpoint in seq order: its own signature and columns, its link to the one before, and
   * (for a seal) its range of events, recomputed `concurrency` at a time.
   */
  private async walkChain(options: VerifyOptions, windowed: boolean, purges: CheckpointStatement[], findings: Findings): Promise<Walked> {
    const heads = new Map<number, string>();
    const running = new Set<Promise<void>>();
    const concurrency = Math.max(1, options.concurrency ?? 4);
    let events = 0;
    let checkpoints = 0;
    let previous: Checked | undefined;
    let newest: StoredCheckpoint | undefined;
    let log: LogFrontier | undefined;
    let sawLogTree = false;
    // The stored tree's rows of the leaves this page of checkpoints added, as their heads make them.
    const treeRows = new Map<number, ExpectedTreeRow>();
    for (let afterSeq = 0; ;) {
      const page = await this.store.checkpointsAfter(afterSeq, PAGE, { from: options.from, to: options.to });
      for (const row of page) {
        checkpoints++;
        newest = row;
        if (options.external) heads.set(row.seq, row.head);
        const checked = this.checkCheckpoint(row, findings);
        if (checkpoints === 1) {
          if (!windowed) await this.checkStart(row, checked?.statement, purges, findings);
        } else {
          // When the one before could not be trusted (reported), this one's link to it cannot be checked.
          if (previous) this.checkLink(previous, row, checked, windowed, findings);
        }
        previous = checked;
        // A checkpoint that cannot be trusted adds no leaf the walk can vouch for: the next one starts from the stored tree.
        if (!checked) log = undefined;
        if (checked && checked.statement.v >= 3) {
          log = await this.checkLogRoot(checked, log, windowed, findings, treeRows);
          sawLogTree = true;
        } else if (checked && sawLogTree) {
          findings.add({
            kind: 'checkpoint_invalid',
            checkpoint: row.seq,
            detail: `checkpoint #${row.seq} is of version ${checked.statement.v}, after checkpoints that named the log's tree: it is not in that tree`,
          });
        }
        if (checked?.statement.kind === 'seal') {
          const task = this.checkRange(checked, findings)
            .then((sealed) => void (events += sealed))
            .finally(() => running.delete(task));
          running.add(task);
          if (running.size >= concurrency) await Promise.race(running);
        }
      }
      await this.checkTreeRows(treeRows, findings);
      treeRows.clear();
      if (page.length < PAGE) break;
      afterSeq = page[page.length - 1].seq;
    }
    await Promise.all(running);
    if (log && newest && !windowed) await this.checkNoLeavesPast(log.size, newest.seq, findings);
    return { events, checkpoints, newest, heads };
  }

  /**
   * A version 3 statement's `log_size` and `log_root` (what partners' consistency proofs end in)
   * must be the tree of the checkpoints before it: kept in memory as the walk goes, from the stored
   * tree only where the walk starts (the first checkpoint, or one after a purge or a window's gap).
   */
  private async checkLogRoot(
    { row, statement }: Checked,
    log: LogFrontier | undefined,
    windowed: boolean,
    findings: Findings,
    treeRows: Map<number, ExpectedTreeRow>,
  ): Promise<LogFrontier | undefined> {
    const size = statement.log_size!;
    let frontier = log;
    if (frontier && frontier.size !== size && !windowed) {
      findings.add({
        kind: 'checkpoint_invalid',
        checkpoint: row.seq,
        detail: `checkpoint #${row.seq}: its log_size ${size} is not the ${frontier.size} checkpoints of the log's tree before it`,
      });
      return undefined;
    }
    // From the stored tree where the walk starts (or restarts): its root is then the stored rows', not the walk's.
    const reloaded = !frontier || frontier.size !== size;
    if (!frontier || reloaded) {
      try {
        frontier = await LogFrontier.stored((leaves) => this.store.logTreeNodes(leaves), size);
      } catch (error) {
        if (!(error instanceof LogTreeIncomplete)) throw error;
        findings.add({
          kind: 'log_tree_altered',
          checkpoint: row.seq,
          detail: `the log's tree stored before checkpoint #${row.seq} is incomplete: ${error.message}`,
        });
        return undefined;
      }
    }
    if (frontier.root() !== statement.log_root) {
      // The database refused the checkpoint unless its root was the stored tree's: read back from that
      // tree and differing, it is the tree that changed since (an empty tree has no rows to change).
      findings.add(
        reloaded && size > 0
          ? {
              kind: 'log_tree_altered',
              checkpoint: row.seq,
              detail: `the log's tree stored before checkpoint #${row.seq} is not the tree its signed log_root names: it was changed, and consistency proofs through it would not verify`,
            }
          : {
              kind: 'checkpoint_invalid',
              checkpoint: row.seq,
              detail: `checkpoint #${row.seq}: its log_root is not the tree of the checkpoints before it, so no consistency proof through it can be trusted`,
            },
      );
      return undefined;
    }
    const leaf = frontier.size;
    treeRows.set(leaf, { seq: row.seq, nodes: frontier.append(row.head) });
    return frontier;
  }

  /**
   * Each stored row of the log's tree that the walk made must hold what the heads make: proofs are
   * read from any of them. With the root each (re)start checked against the stored rows before it,
   * this covers every node of the tree the walk ends with.
   */
  private async checkTreeRows(expected: ReadonlyMap<number, ExpectedTreeRow>, findings: Findings): Promise<void> {
    if (expected.size === 0) return;
    const stored = await this.store.logTreeNodes([...expected.keys()]);
    for (const [leaf, { seq, nodes }] of expected) {
      if (stored.get(leaf)?.equals(nodes)) continue;
      findings.add({
        kind: 'log_tree_altered',
        checkpoint: seq,
        detail: `the log's tree stored for checkpoint #${seq} (leaf ${leaf} of audit_log_tree) is not what the checkpoints' heads make: consistency proofs through it would not verify`,
      });
    }
  }

  /**
   * The stored tree holds no leaf past the last checkpoint's: such a leaf is a checkpoint removed
   * since, or a row added that the next checkpoint would sign into the log's tree. A checkpoint
   * appended while verify ran adds a leaf too, so rows past the walk are a finding only when no
   * checkpoint came after `newestSeq`.
   */
  private async checkNoLeavesPast(walked: number, newestSeq: number, findings: Findings): Promise<void> {
    const size = await this.store.logTreeSize();
    if (size > walked && (await this.store.checkpointsAfter(newestSeq, 1)).length === 0)
      findings.add({
        kind: 'log_tree_altered',
        checkpoint: newestSeq,
        detail: `audit_log_tree holds ${size - walked} leaves past the ${walked} checkpoints' heads, and no checkpoint comes after #${newestSeq}: the newest checkpoints were removed, or rows were added (the next checkpoint would sign them into the log's tree)`,
      });
  }

  /** A checkpoint follows the one before it: the next seq (unless a window skips), its head named, its range continued. */
  private checkLink(previous: Checked, row: StoredCheckpoint, checked: Checked | undefined, windowed: boolean, findings: Findings): void {
    if (row.seq !== previous.row.seq + 1) {
      if (!windowed)
        findings.add({
          kind: 'checkpoint_missing',
          checkpoint: row.seq,
          detail: `checkpoints ${previous.row.seq + 1}–${row.seq - 1} are missing between #${previous.row.seq} and #${row.seq}`,
        });
      return;
    }
    if (!checked) return;
    if (checked.statement.prev_head !== previous.row.head) {
      findings.add({
        kind: 'chain_broken',
        checkpoint: row.seq,
        detail: `checkpoint #${row.seq} does not name #${previous.row.seq}'s head as its previous`,
      });
    }
    if (comparePositions(checked.statement.after, previous.statement.end) !== 0) {
      findings.add({ kind: 'chain_broken', checkpoint: row.seq, detail: `checkpoint #${row.seq} does not start where #${previous.row.seq} ends` });
    }
  }

  /** Events may wait `bound.seconds` for their seal; the oldest unsealed one waiting longer is a finding. */
  private checkUnsealed(
    unsealed: { count: number; oldest: Date | null },
    newest: StoredCheckpoint | undefined,
    bound: VerifyOptions['maxUnsealed'],
    findings: Findings,
  ): void {
    if (!bound || !unsealed.oldest || bound.now.getTime() - unsealed.oldest.getTime() <= bound.seconds * 1000) return;
    findings.add({
      kind: 'unsealed_too_long',
      checkpoint: newest?.seq,
      detail:
        `${unsealed.count} events after ${newest ? `checkpoint #${newest.seq}` : 'the start (there is no checkpoint)'} are not sealed, the oldest from ${unsealed.oldest.toISOString()}, ` +
        `longer than the ${bound.seconds} s they may wait (AUDIT_SEAL_MAX_LAG_SECONDS): the sealer stopped or lags, or the checkpoints that covered them were removed`,
    });
  }

  /** The statement, its head, its signature and its columns; undefined when it cannot be trusted. */
  private checkCheckpoint(row: StoredCheckpoint, findings: Findings): Checked | undefined {
    const statement = parseStatement(row.statement);
    const invalid = (detail: string): undefined => {
      findings.add({ kind: 'checkpoint_invalid', checkpoint: row.seq, detail: `checkpoint #${row.seq}: ${detail}` });
      return undefined;
    };
    if (!statement) return invalid('its statement is not one the sealer writes');
    const valid = this.keys.verify(row.keyId, row.statement, row.signature);
    if (valid === undefined) {
      findings.add({
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
    findings: Findings,
  ): Promise<void> {
    if (!statement) return;
    if (row.seq === 1) {
      if (statement.prev_head !== ZERO_HEAD || comparePositions(statement.after, ORIGIN) !== 0) {
        findings.add({ kind: 'chain_broken', checkpoint: 1, detail: 'checkpoint #1 does not start the chain' });
      }
    } else if (!purges.some((purge) => purge.purge?.through_seq === row.seq - 1 && purge.purge.through_head === statement.prev_head)) {
      findings.add({ kind: 'checkpoint_missing', checkpoint: row.seq, detail: `checkpoints 1–${row.seq - 1} are missing, and no signed purge removed them` });
    }
    for (const event of await this.store.eventsUpTo(statement.after, MAX_LISTED)) {
      findings.inserted({
        kind: 'inserted',
        event_id: event.id,
        checkpoint: row.seq,
        detail: `event ${event.id} is in the range purged before checkpoint #${row.seq}, where nothing may be`,
      });
    }
  }

  /**
   * A version 2 seal's Merkle root (what partners' inclusion proofs end in) must be the tree of the
   * manifest it signed: checked on the stored manifest, which the caller found intact.
   */
  private async checkMerkleRoot(row: StoredCheckpoint, statement: CheckpointStatement, findings: Findings): Promise<void> {
    const manifest = await this.store.manifest(row.seq);
    if (manifest && merkleRootMatches(manifest, statement.merkle_root)) return;
    findings.add({
      kind: 'checkpoint_invalid',
      checkpoint: row.seq,
      detail: `checkpoint #${row.seq}: its Merkle root is not the tree of the events it sealed, so no inclusion proof in it can be trusted`,
    });
  }

  /** Recomputes one checkpoint's range; returns the events found as sealed. */
  private async checkRange({ row, statement }: Checked, findings: Findings): Promise<number> {
    const now = await this.store.rangeDigest(row.seq, statement.after, statement.end);
    if (now.count === statement.events && now.digest === statement.manifest_sha256) {
      if (now.manifestDigest !== statement.manifest_sha256) {
        findings.add({
          kind: 'manifest_altered',
          checkpoint: row.seq,
          detail: `the manifest of checkpoint #${row.seq} was changed or removed (its events are intact)`,
        });
      } else if (statement.v !== 1 && statement.kind === 'seal') {
        await this.checkMerkleRoot(row, statement, findings);
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
      findings.add({
        kind: 'range_altered',
        checkpoint: row.seq,
        detail: `the events of checkpoint #${row.seq} differ from what it sealed, and its manifest was changed too, so they cannot be named`,
      });
      findings.add({ kind: 'manifest_altered', checkpoint: row.seq, detail: `the manifest of checkpoint #${row.seq} was changed or removed` });
      return 0;
    }
    const differences = compareRange(sealed, found);
    for (const event of differences.altered) {
      findings.add({
        kind: 'altered',
        event_id: event.id,
        checkpoint: row.seq,
        position: event.position,
        detail: `event ${event.id} (checkpoint #${row.seq}, position ${event.position}) was changed after it was sealed`,
      });
    }
    for (const event of differences.reordered) {
      findings.add({
        kind: 'reordered',
        event_id: event.id,
        checkpoint: row.seq,
        position: event.sealedPosition,
        detail: `event ${event.id} was sealed at position ${event.sealedPosition} of checkpoint #${row.seq} and is now at position ${event.foundPosition}`,
      });
    }
    for (const event of differences.deleted) {
      findings.deleted({
        kind: 'deleted',
        event_id: event.id,
        checkpoint: row.seq,
        position: event.position,
        detail: `event ${event.id} (checkpoint #${row.seq}, position ${event.position}) is gone`,
      });
    }
    for (const event of differences.inserted) {
      findings.inserted({
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
    external: AsyncIterable<SignedCheckpoint | UnreadableCheckpoint>,
    heads: ReadonlyMap<number, string>,
    newest: StoredCheckpoint | undefined,
    purges: CheckpointStatement[],
    findings: Findings,
  ): Promise<ExternalCount> {
    const purgedThrough = Math.max(0, ...purges.map((purge) => purge.purge?.through_seq ?? 0));
    let beyond: number | undefined;
    let read = 0;
    let verified = 0;
    const unreadable = { not_json: 0, incomplete: 0 };
    for await (const copy of external) {
      read++;
      if ('unreadable' in copy) {
        unreadable[copy.unreadable]++;
        continue;
      }
      if (this.keys.verify(copy.keyId, copy.statement, copy.signature) !== true || headOf(copy.statement) !== copy.head) continue;
      verified++;
      const head = heads.get(copy.seq);
      if (head === undefined) {
        if (newest === undefined || copy.seq > newest.seq) beyond = Math.max(beyond ?? 0, copy.seq);
        else if (copy.seq > purgedThrough)
          findings.add({ kind: 'checkpoint_missing', checkpoint: copy.seq, detail: `checkpoint #${copy.seq}, kept outside the database, is not in it` });
      } else if (head !== copy.head) {
        findings.add({
          kind: 'external_mismatch',
          checkpoint: copy.seq,
          detail: `checkpoint #${copy.seq} in the database differs from the copy kept outside it: it was replaced`,
        });
      }
    }
    if (beyond !== undefined) {
      findings.add({
        kind: 'truncated',
        checkpoint: beyond,
        detail: `the copy kept outside the database goes up to checkpoint #${beyond}, the database only to ${newest ? `#${newest.seq}` : 'none'}: the newest checkpoints were removed`,
      });
    }
    return { read, verified, ignored: read - verified, ...unreadable, unverified: read - verified - unreadable.not_json - unreadable.incomplete };
  }
}

function byPlace(a: Finding, b: Finding): number {
  return (a.checkpoint ?? 0) - (b.checkpoint ?? 0) || (a.position ?? 0) - (b.position ?? 0);
}
