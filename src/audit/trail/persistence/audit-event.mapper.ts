import { AuditEvent, AuditPhase } from '../domain/audit-event';
import { AuditEventEntity, AuditEventRow, UpstreamAttemptRow } from './audit-event.entity';
import type { UpstreamAttempt } from '../../../common/domain/upstream';

const orUndefined = <T>(value: T | null): T | undefined => (value === null ? undefined : value);

export class AuditEventMapper {
  /**
   * The event as its INSERT writes it: a field the event leaves out stays undefined, which
   * JSON.stringify leaves out of the row and json_to_recordset (like TypeORM's insert) writes as
   * NULL; when it occurred is the database's to record. Leaving both out halved the cost of the
   * rows' JSON on the request path (docs/benchmarks.md).
   */
  static toRow(event: AuditEvent): AuditEventRow {
    return {
      id: event.id,
      requestId: event.requestId,
      callerKind: event.callerKind,
      clientId: event.clientId,
      clientName: event.clientName,
      tenant: event.tenant,
      operation: event.operation,
      phase: event.phase,
      httpMethod: event.httpMethod,
      route: event.route,
      reference: event.reference,
      customerId: event.customerId,
      currency: event.currency,
      httpStatus: event.httpStatus,
      upstreamStatus: event.upstreamStatus,
      errorId: event.errorId,
      errorCode: event.errorCode,
      upstreamErrorId: event.upstreamErrorId,
      errorMessage: event.errorMessage,
      latencyMs: event.latencyMs,
      upstreamLatencyMs: event.upstreamLatencyMs,
      sourceIp: event.sourceIp,
      replayed: event.replayed ?? false,
      traceId: event.traceId,
      staffId: event.staffId,
      staffRoles: event.staffRoles && event.staffRoles.length > 0 ? event.staffRoles.join(',') : undefined,
      accessReason: event.accessReason,
      breakGlass: event.breakGlass === true ? true : undefined,
      upstreamAttempts: event.upstreamAttempts && event.upstreamAttempts.length > 0 ? event.upstreamAttempts.map(attemptRow) : undefined,
    };
  }

  static toDomain(row: AuditEventEntity): AuditEvent {
    return {
      id: row.id,
      occurredAt: row.occurredAt,
      requestId: row.requestId,
      callerKind: orUndefined(row.callerKind) as AuditEvent['callerKind'],
      clientId: orUndefined(row.clientId),
      clientName: orUndefined(row.clientName),
      tenant: orUndefined(row.tenant),
      operation: row.operation,
      phase: row.phase as AuditPhase,
      httpMethod: orUndefined(row.httpMethod),
      route: orUndefined(row.route),
      reference: orUndefined(row.reference),
      customerId: orUndefined(row.customerId),
      currency: orUndefined(row.currency),
      httpStatus: orUndefined(row.httpStatus),
      upstreamStatus: orUndefined(row.upstreamStatus),
      errorId: orUndefined(row.errorId),
      errorCode: orUndefined(row.errorCode),
      upstreamErrorId: orUndefined(row.upstreamErrorId),
      errorMessage: orUndefined(row.errorMessage),
      latencyMs: orUndefined(row.latencyMs),
      upstreamLatencyMs: orUndefined(row.upstreamLatencyMs),
      sourceIp: orUndefined(row.sourceIp),
      replayed: row.replayed,
      traceId: orUndefined(row.traceId),
      staffId: orUndefined(row.staffId),
      staffRoles: row.staffRoles === null ? undefined : row.staffRoles.split(','),
      accessReason: orUndefined(row.accessReason),
      breakGlass: row.breakGlass === true ? true : undefined,
      upstreamAttempts: attemptsOf(row.upstreamAttempts),
    };
  }
}

function attemptRow(attempt: UpstreamAttempt): UpstreamAttemptRow {
  return {
    retry: attempt.retry,
    ...(attempt.status === undefined ? {} : { status: attempt.status }),
    latency_ms: attempt.latencyMs,
    ...(attempt.errorId === undefined ? {} : { error_id: attempt.errorId }),
    ...(attempt.failure === undefined ? {} : { failure: attempt.failure }),
  };
}

function attemptsOf(stored: AuditEventEntity['upstreamAttempts']): readonly UpstreamAttempt[] | undefined {
  if (stored === null) return undefined;
  const rows = typeof stored === 'string' ? (JSON.parse(stored) as UpstreamAttemptRow[]) : stored;
  return rows.map((row) => ({
    retry: row.retry,
    ...(row.status === undefined ? {} : { status: row.status }),
    latencyMs: row.latency_ms,
    ...(row.error_id === undefined ? {} : { errorId: row.error_id }),
    ...(row.failure === undefined ? {} : { failure: row.failure as UpstreamAttempt['failure'] }),
  }));
}
