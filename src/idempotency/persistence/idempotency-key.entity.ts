import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'idempotency_keys' })
@Check('idempotency_keys_state_check', `"state" IN ('in_flight', 'completed', 'retryable')`)
export class IdempotencyKeyEntity {
  /** Unique across the gateway: the provider has one namespace of references for all our clients. */
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'idempotency_keys_pkey' })
  reference!: string;

  /** The client that owns the reference; no other client may use it. */
  @Column({ name: 'client_id', type: 'uuid' })
  clientId!: string;

  @Column({ type: 'varchar', length: 40 })
  operation!: string;

  /** SHA-256 of the request without its reference (never the body itself). */
  @Column({ type: 'char', length: 64 })
  fingerprint!: string;

  @Column({ type: 'varchar', length: 16 })
  state!: 'in_flight' | 'completed' | 'retryable';

  @Column({ name: 'locked_until', type: 'timestamptz', nullable: true })
  lockedUntil!: Date | null;

  /** The response data to replay, sealed under DATA_KEY (a JSON string, the JWE): identifiers the caller was given, no request fields. */
  @Column({ type: 'jsonb', nullable: true })
  result!: unknown;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Index('idempotency_keys_expires_at_idx')
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;
}
