import { AddRouteConfig } from './route-config';
import type { FastifyRequest } from 'fastify';
import type { AuditOperation } from '../domain/audit-operations';

interface AuditRouteConfig {
  auditOperation?: AuditOperation;
}

/** The operation a route's audit events are filed under. Every /api/v1 route declares one. */
export const Audited = (operation: AuditOperation) => AddRouteConfig({ auditOperation: operation } satisfies AuditRouteConfig);

export function auditOperationOf(request: FastifyRequest): AuditOperation | undefined {
  return (request.routeOptions.config as AuditRouteConfig | undefined)?.auditOperation;
}
