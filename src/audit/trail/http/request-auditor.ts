import { OPERATION } from '../../../common/domain/audit-operations';
import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../../../common/domain/domain-error';
import { isUuid } from '../../../common/domain/identifiers';
import { isUnder } from '../../../common/http/canonical-target';
import { recordOf, targetOf } from '../../../common/http/request-context';
import { RecordedProblem, RequestRecorder, requestLogAddress } from '../../../common/http/request-recorder.port';
import { noteSubject } from '../../../common/domain/request-record';
import { UpstreamError } from '../../../common/domain/upstream';
import { AuditOperation, TerminalPhase } from '../domain/audit-event';
import { AuditTrail } from '../domain/audit-trail.service';
import { auditOperationOf } from '../../../common/http/audited.decorator';

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
 * canonical path when nothing matched (in any letter case). Health, docs and metrics are not.
 */
export function isAuditedRequest(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  return (route !== undefined && isUnder(API_PREFIX, route)) || isUnder(API_PREFIX, targetOf(request.raw).path);
}

/**
 * Writes the one terminal event of every /api/v1 request, from the edge where the status and the
 * error id are known: after the handler for a success, from the error filter for a failure.
 */
@Injectable()
export class RequestAuditor extends RequestRecorder {
  constructor(private readonly trail: AuditTrail) {
    super();
  }

  async recordSuccess(request: FastifyRequest, status: number): Promise<void> {
    if (!isAuditedRequest(request)) return;
    await this.trail.conclude(recordOf(request.raw), {
      ...this.where(request),
      operation: this.operation(request, status),
      phase: 'succeeded',
      httpStatus: status,
    });
  }

  async recordFailure(request: FastifyRequest, problem: RecordedProblem, exception: unknown): Promise<void> {
    if (!isAuditedRequest(request)) return;
    const record = recordOf(request.raw);
    const refused = new Set(exception instanceof DomainError ? (exception.fields ?? []).map((problem) => problem.field) : []);
    const found = identifiersOf(request, refused);
    // What the handler named stands; the refused body only fills in what it did not.
    noteSubject(record, {
      reference: record.reference ?? found.reference,
      customerId: record.customerId ?? found.customerId,
      currency: record.currency ?? found.currency,
    });
    await this.trail.conclude(record, {
      ...this.where(request),
      operation: this.operation(request, problem.status),
      phase: this.phaseOf(problem.status, exception, record.attempted === true),
      httpStatus: problem.status,
      errorId: problem.errorId,
      errorCode: problem.code,
      errorMessage: problem.message,
    });
  }

  logAddressOf(request: FastifyRequest): string | undefined {
    if (!isAuditedRequest(request)) return undefined;
    const record = recordOf(request.raw);
    const role = record.client?.role;
    return role === 'partner' || role === 'end_user' ? requestLogAddress(record.requestId) : undefined;
  }

  private where(request: FastifyRequest): { httpMethod: string; route?: string } {
    return { httpMethod: request.method, route: request.routeOptions.url };
  }

  private operation(request: FastifyRequest, status: number): AuditOperation {
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
