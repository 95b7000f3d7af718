import { OPERATION } from '../../../common/domain/audit-operations';
import { Injectable, Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../../../common/domain/domain-error';
import { isUuid } from '../../../common/domain/identifiers';
import { isUnder } from '../../../common/http/canonical-target';
import { contextOf, recordOf, targetOf } from '../../../common/http/request-context';
import { RecordedProblem, RequestRecorder, requestLogAddress } from '../../../common/http/request-recorder.port';
import { logContextOf, RequestRecord } from '../../../common/domain/request-record';
import { UpstreamError } from '../../../common/domain/upstream';
import { AuditEvent, TerminalPhase } from '../domain/audit-event';
import { AuditOperation } from '../../../common/domain/audit-operations';
import type { CommittedEvent } from '../domain/audit-log.port';
import { AuditTrail } from '../domain/audit-trail.service';
import { ReceiptIssuer } from '../domain/receipt-issuer.port';
import { auditOperationOf, isReceipted } from '../../../common/http/audited.decorator';

const API_PREFIX = '/api/v1';

/**
 * The identifiers of a request that failed before its handler named them (bad input): taken from
 * the raw body and path only when they have the exact shape of an identifier and were not among
 * the fields validation refused, so that no free text reaches the audit log, and the partner's
 * reference still finds the event.
 */
function identifiersOf(request: FastifyRequest, refused: ReadonlySet<string>): { reference?: string; customerId?: string; currency?: string } {
  const body = typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
  const params = (request.params ?? {}) as Record<string, unknown>;
  const field = (name: string, from: Record<string, unknown> = body) => (refused.has(name) ? undefined : from[name]);
  const uuid = (value: unknown) => (isUuid(value) ? value.toLowerCase() : undefined);
  const currency = field('currency');
  return {
    reference: uuid(field('reference')),
    customerId: uuid(field('customer_id')) ?? uuid(field('customer_id', params)),
    currency: typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? currency : undefined,
  };
}

/**
 * Requests under /api/v1 are audited, however spelled: by the route the router matched, or by the
 * canonical path when nothing matched (in any letter case); and the uses of the admin paths
 * (docs, metrics, the readiness details), which their stage marks. Probes and static pages are not.
 */
export function isAuditedRequest(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  return (route !== undefined && isUnder(API_PREFIX, route)) || isUnder(API_PREFIX, targetOf(request.raw).path) || contextOf(request.raw).auditAs !== undefined;
}

/** The audit log's route column holds at most this many characters. */
const MAX_ROUTE = 200;

/**
 * Writes the one terminal event of every /api/v1 request, from the edge where the status and the
 * error id are known: after the handler for a success, from the error filter for a failure.
 */
@Injectable()
export class RequestAuditor extends RequestRecorder {
  private readonly logger = new Logger('AuditTrail');

  constructor(
    private readonly trail: AuditTrail,
    private readonly receipts: ReceiptIssuer,
  ) {
    super();
  }

  async recordSuccess(request: FastifyRequest, status: number): Promise<string | undefined> {
    if (!isAuditedRequest(request)) return undefined;
    const record = recordOf(request.raw);
    const concluded = await this.trail.conclude(record, {
      ...this.where(request),
      operation: this.operation(request, status),
      phase: 'succeeded',
      httpStatus: status,
    });
    return this.receiptOf(request, record, concluded);
  }

  async recordFailure(request: FastifyRequest, problem: RecordedProblem, exception: unknown): Promise<string | undefined> {
    if (!isAuditedRequest(request)) return undefined;
    const record = recordOf(request.raw);
    const refused = new Set(exception instanceof DomainError ? (exception.fields ?? []).map((problem) => problem.field) : []);
    const found = identifiersOf(request, refused);
    // What the handler named stands; the refused body only fills in what it did not.
    record.noteSubject({
      reference: record.reference ?? found.reference,
      customerId: record.customerId ?? found.customerId,
      currency: record.currency ?? found.currency,
    });
    const concluded = await this.trail.conclude(record, {
      ...this.where(request),
      operation: this.operation(request, problem.status),
      phase: this.phaseOf(problem.status, exception, record.attempted === true),
      httpStatus: problem.status,
      errorId: problem.errorId,
      errorCode: problem.code,
      errorMessage: problem.message,
    });
    return this.receiptOf(request, record, concluded);
  }

  /**
   * The receipt of a write's committed terminal event; a replay's is the original success's (the
   * same bytes: the same facts, signed with the same key), or its own when none is found (purged,
   * or recorded under an outage with the status the partner was answered then).
   * The event is committed whatever happens here: a receipt that cannot be made is logged, and the
   * answer goes out without it.
   */
  private async receiptOf(
    request: FastifyRequest,
    record: RequestRecord,
    concluded: { event: AuditEvent; committed?: CommittedEvent } | undefined,
  ): Promise<string | undefined> {
    const event = concluded?.event;
    // The writes whose answers carry a receipt (their route says so), whatever their outcome, when a partner or one of its end users made them.
    if (event?.tenant === undefined || !isReceipted(request)) return undefined;
    if (event.callerKind !== 'partner' && event.callerKind !== 'end_user') return undefined;
    try {
      // A replay answered with the stored success: that success's receipt. A replay that failed afterwards is receipted as what it was.
      const replayedSuccess = record.replayed === true && event.phase === 'succeeded' && event.reference !== undefined;
      const original = replayedSuccess ? await this.receipts.originalReceipt(event.tenant, event.reference, event.operation) : undefined;
      if (original !== undefined) return original;
      // As the statement that committed it answered it (a provider write's end); else read back.
      const committed = concluded?.committed;
      return committed ? await this.receipts.receiptFor(committed) : await this.receipts.receiptOf(event.id);
    } catch (error) {
      this.logger.warn({ ...logContextOf(record), event_id: event.id, err: error }, 'The receipt of a recorded write could not be made; answered without it');
      return undefined;
    }
  }

  logAddressOf(request: FastifyRequest): string | undefined {
    if (!isAuditedRequest(request)) return undefined;
    const record = recordOf(request.raw);
    const role = record.client?.role;
    return role === 'partner' || role === 'end_user' ? requestLogAddress(record.requestId) : undefined;
  }

  /** An admin path's use names the path it used (Swagger UI's files share one route); any other request, its route. */
  private where(request: FastifyRequest): { httpMethod: string; route?: string } {
    const adminPath = contextOf(request.raw).auditAs !== undefined;
    return { httpMethod: request.method, route: adminPath ? targetOf(request.raw).path.slice(0, MAX_ROUTE) : request.routeOptions.url };
  }

  private operation(request: FastifyRequest, status: number): AuditOperation {
    const adminPath = contextOf(request.raw).auditAs;
    if (adminPath !== undefined) return adminPath;
    if (status === 401) return OPERATION.rejectedAuthentication;
    return auditOperationOf(request) ?? OPERATION.unknownRoute;
  }

  /**
   * The provider's part decides when it was involved. Otherwise a 4xx is the caller's mistake, and
   * a 5xx after an `attempted` event leaves the provider's side unknown.
   */
  private phaseOf(status: number, exception: unknown, attempted: boolean): TerminalPhase {
    if (exception instanceof UpstreamError) return exception.outcome;
    if (status < 500) return 'rejected';
    return attempted ? 'unknown' : 'failed';
  }
}
