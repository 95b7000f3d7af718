/**
 * Routes whose calls also count in a budget of their own, per caller, on top of the caller's: each
 * read of a partner's request log is a query of the audit log. A route names its policy with its
 * operation (`@Audited(operation, { rateLimitPolicy })`).
 */
export const ROUTE_POLICIES = { 'request-log': 'reads of the request log' } as const;
export type RoutePolicy = keyof typeof ROUTE_POLICIES;
