import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../../common/domain/clock.port';
import {
  CheckpointStatement,
  EVENT_DIGEST_VERSION,
  headOf,
  MANIFEST_ENTRY_BYTES,
  merkleRootOf,
  ORIGIN,
  sha256,
  SignedCheckpoint,
  STATEMENT_VERSION,
  statementText,
  ZERO_HEAD,
} from './audit-seal';
import { AuditSealStore, CheckpointSigner, SealScope, StoredCheckpoint, TrustedKeys } from './audit-seal.port';

/** Events per checkpoint at most: a checkpoint is one transaction and its manifest 48 bytes per event. */
export const SEAL_BATCH = 10_000;

/** The chain in the database is behind, or other than, what this process saw it become. */
export class AuditChainRewound extends Error {}

/**
 * Binds audit events into the signed hash chain (audit-seal.ts). Every replica runs it; the seal
 * lock lets one at a time extend the chain, and the others skip their turn.
 *
 * It refuses to go on when the newest checkpoint in the database is older than, or differs from,
 * one this process has seen, or is not one a trusted key signed: checkpoints were removed, replaced
 * or forged, and sealing on would sign whatever was put in their place.
 */
@Injectable()
export class AuditSealer {
  private readonly logger = new Logger('AuditSealer');
  private newestSeen?: { seq: number; head: string };
  private haltedBy?: string;

  constructor(
    private readonly store: AuditSealStore,
    private readonly signer: CheckpointSigner,
    private readonly trusted: TrustedKeys,
    private readonly clock: Clock,
  ) {}

  /** Why sealing stopped, when it did. */
  get halted(): string | undefined {
    return this.haltedBy;
  }

  /** How far the chain reaches, and when the event waiting longest to be sealed occurred. */
  progress(): Promise<{ newest: { seq: number; sealedAt: Date } | null; nextUnsealedAt: Date | null }> {
    return this.store.progress();
  }

  /**
   * Seals every settled event not yet sealed, a checkpoint per SEAL_BATCH; returns how many. Zero
   * when there are none, or when another process is sealing.
   */
  async sealPending(): Promise<number> {
    let total = 0;
    for (;;) {
      const sealed = await this.sealOnce();
      total += sealed;
      if (sealed < SEAL_BATCH) return total;
    }
  }

  /** One checkpoint at most; returns how many events it covers. */
  async sealOnce(): Promise<number> {
    if (this.haltedBy) throw new AuditChainRewound(this.haltedBy);
    const written = await this.store.underSealLock(false, async (scope) => {
      const newest = await this.newestChecked(scope);
      const after = newest?.end ?? ORIGIN;
      const batch = await scope.settledEventsAfter(after, SEAL_BATCH);
      if (!batch) return undefined;
      const { manifest } = batch;
      if (manifest.length !== batch.events * MANIFEST_ENTRY_BYTES) throw new Error(`A manifest of ${manifest.length} bytes for ${batch.events} events`);
      const log = await scope.logTree();
      const checkpoint = this.signed({
        v: STATEMENT_VERSION,
        seq: (newest?.seq ?? 0) + 1,
        kind: 'seal',
        sealed_at: this.clock.now().toISOString(),
        prev_head: newest?.head ?? ZERO_HEAD,
        digest: EVENT_DIGEST_VERSION,
        after,
        end: batch.end,
        events: batch.events,
        first_occurred_at: batch.firstOccurredAt,
        last_occurred_at: batch.lastOccurredAt,
        manifest_sha256: sha256(manifest).toString('hex'),
        purge: null,
        merkle_root: merkleRootOf(manifest),
        log_size: log.size,
        log_root: log.root,
      });
      await scope.append(checkpoint, manifest);
      return { checkpoint, events: batch.events };
    });
    if (!written) return 0;
    this.committed(written.checkpoint);
    return written.events;
  }

  /**
   * Removes the oldest sealed events older than `cutoff` (whole checkpoints, about `maxEvents` at
   * a time) and records the removal as a signed purge checkpoint in the same transaction, so that
   * what is left still verifies. Returns how many events went.
   */
  async purgeOnce(cutoff: Date, maxEvents: number): Promise<number> {
    const written = await this.store.underSealLock(true, async (scope) => {
      const newest = await this.newestChecked(scope);
      if (!newest) return undefined;
      const removed = await scope.purgeSealed(cutoff, maxEvents);
      if (!removed) return undefined;
      const log = await scope.logTree();
      const checkpoint = this.signed({
        v: STATEMENT_VERSION,
        seq: newest.seq + 1,
        kind: 'purge',
        sealed_at: this.clock.now().toISOString(),
        prev_head: newest.head,
        digest: EVENT_DIGEST_VERSION,
        after: newest.end,
        end: newest.end,
        events: 0,
        first_occurred_at: null,
        last_occurred_at: null,
        manifest_sha256: null,
        purge: { through_seq: removed.throughSeq, through_head: removed.throughHead, events: removed.purged, cutoff: cutoff.toISOString() },
        merkle_root: null,
        log_size: log.size,
        log_root: log.root,
      });
      await scope.append(checkpoint);
      return { checkpoint, events: removed.purged };
    });
    if (!written) return 0;
    this.committed(written.checkpoint);
    return written.events;
  }

  private signed(fields: CheckpointStatement): SignedCheckpoint {
    const statement = statementText(fields);
    return { seq: fields.seq, statement, head: headOf(statement), keyId: this.signer.keyId, signature: this.signer.sign(statement) };
  }

  private async newestChecked(scope: SealScope): Promise<StoredCheckpoint | undefined> {
    const newest = await scope.newestCheckpoint();
    const seen = this.newestSeen;
    if (seen && (!newest || newest.seq < seen.seq || (newest.seq === seen.seq && newest.head !== seen.head))) {
      this.haltedBy =
        `the newest audit checkpoint is ${newest ? `#${newest.seq}` : 'gone'}, but this process saw #${seen.seq} (head ${seen.head}): ` +
        'checkpoints were removed or replaced; sealing has stopped so as not to sign over them. Run npm run audit:verify against the checkpoints kept outside the database';
      this.logger.error({ newest_seen: seen, newest_found: newest ? { seq: newest.seq, head: newest.head } : null }, `Audit sealing stopped: ${this.haltedBy}`);
      throw new AuditChainRewound(this.haltedBy);
    }
    if (newest && (newest.head !== this.newestSeen?.head || newest.seq !== this.newestSeen.seq)) {
      if (this.trusted.verify(newest.keyId, newest.statement, newest.signature) !== true || headOf(newest.statement) !== newest.head) {
        this.haltedBy =
          `the newest audit checkpoint, #${newest.seq}, is not signed by a trusted key (AUDIT_SIGNING_KEY, AUDIT_PUBLIC_KEYS): ` +
          'it was forged or changed; sealing has stopped so as not to build on it. Run npm run audit:verify';
        this.logger.error({ newest_found: { seq: newest.seq, head: newest.head, key_id: newest.keyId } }, `Audit sealing stopped: ${this.haltedBy}`);
        throw new AuditChainRewound(this.haltedBy);
      }
      this.newestSeen = { seq: newest.seq, head: newest.head };
    }
    return newest;
  }

  /**
   * Every checkpoint goes to the log too, so that it can be kept outside the database. The
   * signature is `ed25519_signature`: the log redacts any field named `signature` (the provider's).
   */
  private committed(checkpoint: SignedCheckpoint): void {
    this.newestSeen = { seq: checkpoint.seq, head: checkpoint.head };
    this.logger.log(
      {
        audit_checkpoint: {
          seq: checkpoint.seq,
          statement: checkpoint.statement,
          head: checkpoint.head,
          key_id: checkpoint.keyId,
          ed25519_signature: checkpoint.signature,
        },
      },
      'Audit checkpoint',
    );
  }
}
