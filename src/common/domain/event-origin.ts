/**
 * What recorded a fact, for the partner event written with it: the request it came from and the
 * audit event that records it (whose receipt then proves the partner event too). Both are unknown
 * for a fact the service records on its own (a reconstruction).
 */
export interface EventOrigin {
  readonly requestId?: string;
  readonly auditEventId?: string;
}
