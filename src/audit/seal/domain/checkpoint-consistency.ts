import { Injectable } from '@nestjs/common';
import { DomainError } from '../../../common/domain/domain-error';
import { CheckpointStatement, parseStatement } from './audit-seal';
import { AuditSealStore, StoredCheckpoint } from './audit-seal.port';
import { LogTreeIncomplete, withStoredNodes } from './log-tree';
import { consistencyProofOf, inclusionProofOf, leafHash, verifyConsistency, verifyInclusion } from './merkle';

/** No checkpoint has this number: not written yet, or purged. */
export class CheckpointNotFound extends DomainError {
  constructor(seq: number) {
    super('CHECKPOINT.NOT_FOUND', { details: `There is no checkpoint #${seq}` });
  }
}

/** The two checkpoints exist, but no consistency proof can be given between them (`details` says why). */
export class ConsistencyUnavailable extends DomainError {
  constructor(details: string) {
    super('CHECKPOINT.PROOF_UNAVAILABLE', { details });
  }
}

/**
 * That checkpoint `to` descends from checkpoint `from`: `consistency` is the RFC 9162 consistency
 * proof from the log's tree `from` names (its `log_size` leaves) to the one `to` names, and
 * `inclusion` the inclusion proof of `from`'s own head (leaf `from.log_size`) in `to`'s tree.
 * Together: every checkpoint before `from`, and `from` itself, is in `to`'s history.
 */
export interface ConsistencyProof {
  readonly from: StoredCheckpoint;
  readonly to: StoredCheckpoint;
  readonly consistency: readonly Buffer[];
  readonly inclusion: readonly Buffer[];
}

@Injectable()
export class CheckpointConsistency {
  constructor(private readonly store: AuditSealStore) {}

  /**
   * @throws CheckpointNotFound when either checkpoint is not there (`to` defaults to the newest).
   * @throws ConsistencyUnavailable when either was written before statements named the log's tree,
   * when `to` is not after `from`, or when the stored tree does not lead to the signed roots.
   */
  async between(fromSeq: number, toSeq?: number): Promise<ConsistencyProof> {
    const [from, to] = await Promise.all([
      this.store.checkpoint(fromSeq),
      toSeq === undefined ? this.store.newestCheckpoints(1).then(([newest]) => newest) : this.store.checkpoint(toSeq),
    ]);
    if (!from) throw new CheckpointNotFound(fromSeq);
    if (!to) throw new CheckpointNotFound(toSeq ?? 0);
    const older = this.logOf(from);
    const newer = this.logOf(to);
    const m = older.log_size!;
    const n = newer.log_size!;
    // `from`'s head is leaf m: in `to`'s tree only when `to` came after it.
    if (to.seq <= from.seq || m >= n) throw new ConsistencyUnavailable(`Checkpoint #${to.seq} is not after checkpoint #${from.seq}`);
    let proofs: { consistency: Buffer[]; inclusion: Buffer[] };
    try {
      proofs = await withStoredNodes(
        (leaves) => this.store.logTreeNodes(leaves),
        (hashOf) => ({ consistency: m === 0 ? [] : consistencyProofOf(hashOf, n, m), inclusion: inclusionProofOf(hashOf, n, m) }),
      );
    } catch (error) {
      if (error instanceof LogTreeIncomplete)
        throw new ConsistencyUnavailable(`The log's stored tree is incomplete (audit:verify reports it): ${error.message}`);
      throw error;
    }
    // Given only if it leads to the roots the two checkpoints signed.
    const newerRoot = Buffer.from(newer.log_root!, 'hex');
    const holds =
      (m === 0 || verifyConsistency(m, n, Buffer.from(older.log_root!, 'hex'), newerRoot, proofs.consistency)) &&
      verifyInclusion(m, n, leafHash(Buffer.from(from.head, 'hex')), proofs.inclusion, newerRoot);
    if (!holds) throw new ConsistencyUnavailable("The log's stored tree does not lead to the signed roots (audit:verify reports it)");
    return { from, to, ...proofs };
  }

  private logOf(checkpoint: StoredCheckpoint): CheckpointStatement {
    const statement = parseStatement(checkpoint.statement);
    if (!statement) throw new ConsistencyUnavailable(`Checkpoint #${checkpoint.seq}'s statement is not one the sealer writes (audit:verify reports it)`);
    if (statement.v < 3) throw new ConsistencyUnavailable(`Checkpoint #${checkpoint.seq} was written before checkpoints named the log's tree`);
    return statement;
  }
}
