import { ApiProperty } from '@nestjs/swagger';
import { IsUuidField } from '../../../common/http/field-rules';
import type { InclusionProof } from '../domain/audit-receipts';

export class EventIdParamDto {
  @ApiProperty({ format: 'uuid', description: 'An audit event of one of your requests: `events[].id` in its timeline (`GET /api/v1/requests/{request_id}`).' })
  @IsUuidField('event_id must be a UUID')
  readonly event_id!: string;
}

export class SignedCheckpointDto {
  @ApiProperty({ example: 4211 })
  readonly seq!: number;

  @ApiProperty({ description: 'The signed JSON text, exactly as signed: its `merkle_root` is where the inclusion proof leads.' })
  readonly statement!: string;

  @ApiProperty({ description: 'SHA-256 of the statement, hex: the next checkpoint’s `prev_head`.' })
  readonly head!: string;

  @ApiProperty({ description: 'The signing key’s id: `kid` in /.well-known/audit-keys.json.', example: '3f9a1c0b7d2e4f61' })
  readonly key_id!: string;

  @ApiProperty({ description: 'Ed25519 over the statement’s UTF-8 bytes, base64.' })
  readonly signature!: string;
}

export class InclusionProofDto {
  @ApiProperty({ format: 'uuid' })
  readonly event_id!: string;

  @ApiProperty({ description: 'The event’s hash as sealed (SHA-256 of the canonical form of its columns), hex.' })
  readonly event_hash!: string;

  @ApiProperty({
    description: 'The leaf is the manifest entry: the event id’s 16 bytes, then the event hash; hashed as RFC 9162 hashes a leaf (0x00 prefix).',
    example: 17,
  })
  readonly leaf_index!: number;

  @ApiProperty({ description: 'Events the checkpoint sealed: the tree’s size.', example: 40 })
  readonly tree_size!: number;

  @ApiProperty({ type: [String], description: 'RFC 9162 inclusion proof: sibling hashes from the leaf up, hex.' })
  readonly inclusion_proof!: string[];

  @ApiProperty({ description: 'The tree head the proof leads to: the checkpoint statement’s `merkle_root`, hex.' })
  readonly merkle_root!: string;

  @ApiProperty({ type: SignedCheckpointDto })
  readonly checkpoint!: SignedCheckpointDto;

  static from(proof: InclusionProof): InclusionProofDto {
    return {
      event_id: proof.eventId,
      event_hash: proof.eventHash.toString('hex'),
      leaf_index: proof.leafIndex,
      tree_size: proof.treeSize,
      inclusion_proof: proof.path.map((hash) => hash.toString('hex')),
      merkle_root: proof.merkleRoot,
      checkpoint: {
        seq: proof.checkpoint.seq,
        statement: proof.checkpoint.statement,
        head: proof.checkpoint.head,
        key_id: proof.checkpoint.keyId,
        signature: proof.checkpoint.signature,
      },
    };
  }
}

export class ProofPendingDto {
  @ApiProperty({ enum: ['pending'], example: 'pending' })
  readonly status!: 'pending';

  @ApiProperty({ description: 'Ask again after this many seconds (also `Retry-After`): events are sealed every second.', example: 2 })
  readonly retry_after_seconds!: number;
}
