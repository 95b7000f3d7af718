import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { IsUuidField, Rules, toDecimalInteger } from '../../../common/http/field-rules';
import type { InclusionProof } from '../domain/audit-receipts';
import type { StoredCheckpoint } from '../domain/audit-seal.port';
import type { ConsistencyProof } from '../domain/checkpoint-consistency';

export class EventIdParamDto {
  @ApiProperty({ format: 'uuid', description: 'An audit event of one of your requests: `events[].id` in its timeline (`GET /api/v1/requests/{request_id}`).' })
  @IsUuidField('event_id must be a UUID')
  readonly event_id!: string;
}

@ApiSchema({ name: 'SignedCheckpoint' })
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

function signedCheckpointOf(checkpoint: StoredCheckpoint): SignedCheckpointDto {
  return { seq: checkpoint.seq, statement: checkpoint.statement, head: checkpoint.head, key_id: checkpoint.keyId, signature: checkpoint.signature };
}

@ApiSchema({ name: 'InclusionProof' })
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
      checkpoint: signedCheckpointOf(proof.checkpoint),
    };
  }
}

@ApiSchema({ name: 'ProofPending' })
export class ProofPendingDto {
  @ApiProperty({ enum: ['pending'], example: 'pending' })
  readonly status!: 'pending';

  @ApiProperty({ description: 'Ask again after this many seconds (also `Retry-After`): events are sealed every second.', example: 2 })
  readonly retry_after_seconds!: number;
}

/** A checkpoint's number, as a query parameter. */
const MAX_SEQ = Number.MAX_SAFE_INTEGER;
const seqRules = (name: string) =>
  Rules(
    IsInt({ message: `${name} must be an integer` }),
    Min(1, { message: `${name} must be a checkpoint number, from 1` }),
    Max(MAX_SEQ, { message: `${name} is too large` }),
  );

export class ConsistencyQueryDto {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The checkpoint you kept (its `seq`): an earlier proof’s `checkpoint.seq`.', example: 4211 })
  @Transform(toDecimalInteger)
  @seqRules('from')
  readonly from!: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'A later checkpoint (its `seq`); the newest when left out.', example: 4388 })
  @IsOptional()
  @Transform(toDecimalInteger)
  @seqRules('to')
  readonly to?: number;
}

@ApiSchema({ name: 'ConsistencyProof' })
export class ConsistencyProofDto {
  @ApiProperty({ type: SignedCheckpointDto, description: 'The earlier checkpoint: compare it with the one you kept, byte for byte.' })
  readonly from!: SignedCheckpointDto;

  @ApiProperty({ type: SignedCheckpointDto, description: 'The later checkpoint.' })
  readonly to!: SignedCheckpointDto;

  @ApiProperty({
    type: [String],
    description:
      'RFC 9162 consistency proof (hex) from the log’s tree `from`’s statement names (`log_size`, `log_root`) to the one `to`’s names; ' +
      'empty when `from` names an empty tree.',
  })
  readonly consistency_proof!: string[];

  @ApiProperty({
    type: [String],
    description: 'RFC 9162 inclusion proof (hex) of `from`’s head (SHA-256 of its statement) as leaf `from.log_size` in `to`’s tree.',
  })
  readonly inclusion_proof!: string[];

  static from(proof: ConsistencyProof): ConsistencyProofDto {
    return {
      from: signedCheckpointOf(proof.from),
      to: signedCheckpointOf(proof.to),
      consistency_proof: proof.consistency.map((hash) => hash.toString('hex')),
      inclusion_proof: proof.inclusion.map((hash) => hash.toString('hex')),
    };
  }
}
