import { Injectable } from '@nestjs/common';
import { DomainError } from '../../../common/domain/domain-error';
import { decodeManifest, manifestLeaves, parseStatement } from './audit-seal';
import { AuditSealStore, StoredCheckpoint } from './audit-seal.port';
import { inclusionProof } from './merkle';

/** How long to wait before asking again for the proof of an event not sealed yet: the sealer runs every second. */
export const PROOF_RETRY_SECONDS = 2;

/** No event of the caller's tenant has this id (another tenant's is answered the same). */
export class ReceiptNotFound extends DomainError {
  constructor() {
    super('RECEIPT.NOT_FOUND');
  }
}

/** The event is sealed, but no inclusion proof can be given for it: its checkpoint carries no Merkle tree (statement version 1), or its manifest does not hold it. */
export class ProofUnavailable extends DomainError {
  constructor(details: string) {
    super('RECEIPT.PROOF_UNAVAILABLE', { details });
  }
}

/** An event's place in its checkpoint's Merkle tree (RFC 9162), and the signed checkpoint whose `merkle_root` the path leads to. */
export interface InclusionProof {
  readonly eventId: string;
  /** The event's hash as sealed (the canonical form the seal uses). */
  readonly eventHash: Buffer;
  /** The manifest entry (the event's 16 id bytes, then its hash) is the leaf: its index and the tree's size. */
  readonly leafIndex: number;
  readonly treeSize: number;
  /** Sibling hashes from the leaf up. */
  readonly path: readonly Buffer[];
  readonly merkleRoot: string;
  readonly checkpoint: StoredCheckpoint;
}

export type ProofAnswer = { readonly kind: 'sealed'; readonly proof: InclusionProof } | { readonly kind: 'pending'; readonly retryAfterSeconds: number };

/** Proofs a partner can check without us: that the audit log holds its event, under a checkpoint signed with the audit key. */
@Injectable()
export class AuditReceipts {
  constructor(private readonly store: AuditSealStore) {}

  /**
   * @throws ReceiptNotFound when the tenant made no request with an event of this id.
   * @throws ProofUnavailable when its checkpoint has no tree, or does not hold it.
   */
  async proofOf(tenant: string, eventId: string): Promise<ProofAnswer> {
    const found = await this.store.sealedEvent(tenant, eventId);
    if (!found) throw new ReceiptNotFound();
    if (!found.checkpoint) return { kind: 'pending', retryAfterSeconds: PROOF_RETRY_SECONDS };
    const { manifest, ...checkpoint } = found.checkpoint;
    const statement = parseStatement(checkpoint.statement);
    if (!statement || statement.v === 1 || !statement.merkle_root) {
      throw new ProofUnavailable(`The event was sealed by checkpoint #${checkpoint.seq}, written before checkpoints carried a Merkle tree`);
    }
    const entries = decodeManifest(manifest) ?? [];
    const leafIndex = entries.findIndex((entry) => entry.id === eventId);
    // Inside a sealed range, yet not sealed: written there afterwards (audit:verify names it).
    if (leafIndex < 0) throw new ProofUnavailable(`Checkpoint #${checkpoint.seq} did not seal this event`);
    return {
      kind: 'sealed',
      proof: {
        eventId,
        eventHash: entries[leafIndex].hash,
        leafIndex,
        treeSize: entries.length,
        path: inclusionProof(manifestLeaves(manifest), leafIndex),
        merkleRoot: statement.merkle_root,
        checkpoint,
      },
    };
  }
}
