import { AuditEvent, AuditOperation, AuditPhase } from '../domain/audit-event';
import { AuditEventEntity, UpstreamAttemptRow } from './audit-event.entity';
import type { UpstreamAttempt } from '../../../common/domain/upstream';

const orUndefined = <T>(value: T | null): T | undefined => (value === null ? undefined : value);
const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

export class AuditEventMapper {
  static toRow(event: AuditEvent): AuditEventEntity {
    return {
      id: event.id,
      occurredAt: event.occurredAt,
      requestId: event.requestId,
      callerKind: orNull(event.callerKind),
      clientId: orNull(event.clientId),
      clientName: orNull(event.clientName),
      tenant: orNull(event.tenant),
      operation: event.operation,
      phase: event.phase,
      httpMethod: orNull(event.httpMethod),
      route: orNull(event.route),
      reference: orNull(event.reference),
      customerId: orNull(event.customerId),
      currency: orNull(event.currency),
      httpStatus: orNull(event.httpStatus),
      upstreamStatus: orNull(event.upstreamStatus),
      errorId: orNull(event.errorId),
      errorCode: orNull(event.errorCode),
      upstreamErrorId: orNull(event.upstreamErrorId),
      errorMessage: orNull(event.errorMessage),
      latencyMs: orNull(event.latencyMs),
      upstreamLatencyMs: orNull(event.upstreamLatencyMs),
      sourceIp: orNull(event.sourceIp),
      replayed: event.replayed ?? false,
      traceId: orNull(event.traceId),
      staffId: orNull(event.staffId),
      staffRoles: event.staffRoles && event.staffRoles.length > 0 ? event.staffRoles.join(',') : null,
      accessReason: orNull(event.accessReason),
      breakGlass: event.breakGlass === true ? true : null,
      upstreamAttempts: event.upstreamAttempts && event.upstreamAttempts.length > 0 ? event.upstreamAttempts.map(attemptRow) : null,
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
      operation: row.operation as AuditOperation,
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
