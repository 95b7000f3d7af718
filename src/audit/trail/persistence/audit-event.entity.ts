import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** One provider attempt as upstream_attempts stores it (snake_case, as the request log shows it). */
export interface UpstreamAttemptRow {
  readonly retry: number;
  readonly status?: number;
  readonly latency_ms: number;
  readonly error_id?: string;
  readonly failure?: string;
}

/** The audit_events table; written by migrations, append-only (see CreateAuditEvents). */
@Entity({ name: 'audit_events' })
@Check('audit_events_caller_kind_check', `"caller_kind" IN ('partner', 'admin', 'end_user', 'staff')`)
@Check('audit_events_staff_check', `("staff_id" IS NULL) = ("caller_kind" IS DISTINCT FROM 'staff') AND "break_glass" IS NOT FALSE`)
@Check('audit_events_trace_id_check', `"trace_id" ~ '^[0-9a-f]{32}$' AND "trace_id" <> '00000000000000000000000000000000'`)
@Check('audit_events_phase_check', `"phase" IN ('attempted', 'succeeded', 'rejected', 'failed', 'unknown')`)
@Index('audit_events_occurred_at_idx', ['occurredAt', 'id'])
// (reference | customer_id, the searches apart, occurred_at, id): an expression TypeORM does not
// declare, built by AuditSearchesApart1765094400000; isAuditQuery (audit-query-key.sql.ts) names its second key.
@Index('audit_events_by_reference_idx', { synchronize: false })
@Index('audit_events_by_customer_idx', { synchronize: false })
@Index('audit_events_error_id_idx', ['errorId'], { where: 'error_id IS NOT NULL' })
@Index('audit_events_upstream_error_id_idx', ['upstreamErrorId'], { where: 'upstream_error_id IS NOT NULL' })
@Index('audit_events_client_idx', ['clientId', 'occurredAt', 'id'], { where: 'client_id IS NOT NULL' })
@Index('audit_events_operation_idx', ['operation', 'occurredAt', 'id'])
@Index('audit_events_phase_idx', ['phase', 'occurredAt', 'id'])
@Index('audit_events_tx_idx', ['tx', 'id'])
@Index('audit_events_staff_idx', ['staffId', 'occurredAt', 'id'], { where: 'staff_id IS NOT NULL' })
@Index('audit_events_request_idx', ['requestId', 'tenant'])
@Index('audit_events_tenant_idx', ['tenant', 'occurredAt', 'id'], { where: 'tenant IS NOT NULL' })
@Check('audit_events_upstream_attempts_check', `jsonb_typeof("upstream_attempts") = 'array'`)
export class AuditEventEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  /** Set by the database when the row is written (clock_timestamp()), never by the service: its role may not (database-roles.ts). */
  @Column({ name: 'occurred_at', type: 'timestamptz', default: () => 'clock_timestamp()', insert: false })
  occurredAt!: Date;

  @Column({ name: 'request_id', type: 'varchar', length: 128 })
  requestId!: string;

  @Column({ name: 'client_id', type: 'uuid', nullable: true })
  clientId!: string | null;

  @Column({ name: 'caller_kind', type: 'varchar', length: 16, nullable: true })
  callerKind!: string | null;

  @Column({ name: 'client_name', type: 'varchar', length: 100, nullable: true })
  clientName!: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  tenant!: string | null;

  @Column({ type: 'varchar', length: 40 })
  operation!: string;

  @Column({ type: 'varchar', length: 16 })
  phase!: string;

  @Column({ name: 'http_method', type: 'varchar', length: 10, nullable: true })
  httpMethod!: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  route!: string | null;

  @Column({ type: 'uuid', nullable: true })
  reference!: string | null;

  @Column({ name: 'customer_id', type: 'uuid', nullable: true })
  customerId!: string | null;

  @Column({ type: 'varchar', length: 3, nullable: true })
  currency!: string | null;

  @Column({ name: 'http_status', type: 'smallint', nullable: true })
  httpStatus!: number | null;

  @Column({ name: 'upstream_status', type: 'smallint', nullable: true })
  upstreamStatus!: number | null;

  @Column({ name: 'error_id', type: 'uuid', nullable: true })
  errorId!: string | null;

  @Column({ name: 'error_code', type: 'varchar', length: 64, nullable: true })
  errorCode!: string | null;

  @Column({ name: 'upstream_error_id', type: 'varchar', length: 100, nullable: true })
  upstreamErrorId!: string | null;

  @Column({ name: 'error_message', type: 'varchar', length: 500, nullable: true })
  errorMessage!: string | null;

  @Column({ name: 'latency_ms', type: 'integer', nullable: true })
  latencyMs!: number | null;

  @Column({ name: 'upstream_latency_ms', type: 'integer', nullable: true })
  upstreamLatencyMs!: number | null;

  @Column({ name: 'source_ip', type: 'varchar', length: 45, nullable: true })
  sourceIp!: string | null;

  @Column({ type: 'boolean', default: false })
  replayed!: boolean;

  @Column({ name: 'trace_id', type: 'varchar', length: 32, nullable: true })
  traceId!: string | null;

  /** A staff member's stable id at the company's provider (StaffAccess). */
  @Column({ name: 'staff_id', type: 'varchar', length: 255, nullable: true })
  staffId!: string | null;

  /** The roles a staff member's request was allowed with, comma-separated. */
  @Column({ name: 'staff_roles', type: 'varchar', length: 100, nullable: true })
  staffRoles!: string | null;

  /** Why they looked, as their search said. */
  @Column({ name: 'access_reason', type: 'varchar', length: 200, nullable: true })
  accessReason!: string | null;

  /** True on an admin client token's events (break-glass); null otherwise. */
  @Column({ name: 'break_glass', type: 'boolean', nullable: true })
  breakGlass!: boolean | null;

  /**
   * Each provider attempt of a call tried more than once, in order (RequestLogs); null for a call
   * made once (its attempt is the upstream_* columns). Written as the array, read back parsed (or
   * as JSON text, from a query that selects it so).
   */
  @Column({ name: 'upstream_attempts', type: 'jsonb', nullable: true })
  upstreamAttempts!: string | readonly UpstreamAttemptRow[] | null;

  /**
   * The transaction that wrote the event, set by the database: the order events are sealed in
   * (SealAuditEvents). Never written, nor read, by the service.
   */
  @Column({ type: 'bigint', insert: false, update: false, select: false, default: () => 'audit_current_tx()' })
  tx?: string;
}

/** The columns the service writes (occurred_at and tx are the database's). */
type Written = Omit<AuditEventEntity, 'occurredAt' | 'tx'>;
type AlwaysWritten = 'id' | 'requestId' | 'operation' | 'phase' | 'replayed';

/** An event as the service inserts it: a column it has no value for is undefined, and stored as NULL. */
export type AuditEventRow = Pick<Written, AlwaysWritten> & { readonly [K in Exclude<keyof Written, AlwaysWritten>]?: Exclude<Written[K], null> };
