import type { ApiVersion } from './api-versions';
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { UpstreamAttempt, UpstreamFacts } from './upstream';

/**
 * A request's audit record: what its audit events are made of, gathered while it runs. A class with
 * one writer per field, named below; nothing else assigns to a record.
 *
 * The edge makes it with the request's context and enters it into the request's scope (one
 * AsyncLocalStorage, `inRequestScope`), where whatever serves the request finds it
 * (`currentRecord()`): the domain services, `ProviderWrites`, the `AuditTrail` and the provider
 * client. No port or service takes it as an argument.
 *
 * | Field | Writer | Called by | When |
 * |---|---|---|---|
 * | requestId, startedAt | the constructor | the request's context (common/http/request-context.ts), when the request is first seen | it arrives |
 * | sourceIp | noteArrival | the edge's request-context stage (edge.pipeline.ts) | it arrives |
 * | client | noteClient | the identify stage (auth/http/identify.stage.ts); the session endpoints, for the user a login or logout is about; an admin path's sign-in | its credentials are accepted |
 * | staffRoles | noteStaffRoles | the route's access check (auth/http/access.guard.ts), for a staff member | the roles they call it with are known |
 * | accessReason | noteAccessReason | the audit search, from its `reason` | a staff search names why |
 * | reference, customerId, currency | noteSubject | domain services (AuditTrail.about, ProviderWrites.begin); the auditor, from a refused body's exact identifiers | it is known what the request is about |
 * | upstream | noteUpstreamCall | the upstream client | after each provider call |
 * | upstreamAttempts | noteUpstreamAttempts | the upstream client | after a provider call that was retried |
 * | attempted | noteAttempted | AuditTrail.attempt | its `attempted` event is committed |
 * | replayed | noteReplayed | the edge, as it sets Idempotent-Replayed (common/http/replay-header.ts: markReplayed) | the answer comes from the store |
 * | concluded | noteConcluded | AuditTrail.conclude | its terminal event is written (or failed to be) |
 * | traceId | noteTrace | the edge's trace stage (common/http/trace-stage.ts) | it arrives, when tracing is on and its trace is sampled |
 */
export class RequestRecord implements RequestSubject {
  /** performance.now() when the request arrived. */
  readonly startedAt = performance.now();
  /** The caller's address as the service sees it (behind TRUST_PROXY, the forwarded one). */
  sourceIp?: string;
  client?: RecordedClient;
  reference?: string;
  customerId?: string;
  currency?: string;
  upstream?: UpstreamFacts;
  /** Each attempt of the provider calls that were retried, in order (a call made once leaves none). */
  upstreamAttempts?: readonly UpstreamAttempt[];
  /** An `attempted` event was committed: a provider call may have happened. */
  attempted?: boolean;
  /** The response is a replay from the idempotency store. */
  replayed?: boolean;
  /** The terminal event has been written, or its writing failed: never twice. */
  concluded?: boolean;
  /** The W3C trace id of the request's sampled trace: in its log lines and audit events. */
  traceId?: string;
  /** A staff member's roles this request was allowed with (never all their roles: the ones the operation takes). */
  staffRoles?: readonly string[];
  /** Why a staff member or an admin looked (a ticket id or words), as their search gave it. */
  accessReason?: string;

  constructor(readonly requestId: string) {}

  noteArrival(sourceIp: string): void {
    this.sourceIp = sourceIp;
  }

  noteClient(client: RecordedClient): void {
    this.client = {
      id: client.id,
      name: client.name,
      tenant: client.tenant,
      role: client.role,
      ...(client.scopes ? { scopes: client.scopes } : {}),
      ...(client.session ? { session: client.session } : {}),
      ...(client.staff ? { staff: client.staff } : {}),
    };
  }

  noteStaffRoles(roles: readonly string[]): void {
    this.staffRoles = roles;
  }

  noteAccessReason(reason: string): void {
    this.accessReason = reason;
  }

  /** Names what the request is about; fields left undefined keep what the record has. */
  noteSubject(subject: RequestSubject): void {
    if (subject.reference !== undefined) this.reference = subject.reference;
    if (subject.customerId !== undefined) this.customerId = subject.customerId;
    if (subject.currency !== undefined) this.currency = subject.currency;
  }

  /** What the last provider call of a request came to. */
  noteUpstreamCall(call: UpstreamFacts): void {
    this.upstream = { ...call };
  }

  /** The attempts of a provider call that was retried, after those of any earlier call of the request. */
  noteUpstreamAttempts(attempts: readonly UpstreamAttempt[]): void {
    this.upstreamAttempts = this.upstreamAttempts ? [...this.upstreamAttempts, ...attempts] : attempts;
  }

  noteTrace(traceId: string): void {
    this.traceId = traceId;
  }

  noteAttempted(): void {
    this.attempted = true;
  }

  noteReplayed(): void {
    this.replayed = true;
  }

  /** Marks the record concluded; false when it already was (the terminal event is written once). */
  noteConcluded(): boolean {
    if (this.concluded) return false;
    this.concluded = true;
    return true;
  }
}

/** The one scope a request's record lives in while the request is served. */
const scope = new AsyncLocalStorage<RequestRecord>();

/** Runs `work` (and everything it starts) in the scope of `record`'s request. */
export function inRequestScope<T>(record: RequestRecord, work: () => T): T {
  return scope.run(record, work);
}

/**
 * The record of the request being served.
 * @throws when called outside a request's scope: a programming error, never a request's.
 */
export function currentRecord(): RequestRecord {
  const record = scope.getStore();
  if (!record) throw new Error('No request is in scope: the record is read only while a request is served (inRequestScope)');
  return record;
}

/** What an API client may do: call the partner API, or administer the service too. */
export const CLIENT_ROLES = ['partner', 'admin'] as const;
export type ClientRole = (typeof CLIENT_ROLES)[number];

/**
 * The kinds of caller: a partner's server or an admin (client tokens, tenant-wide; an admin token is
 * the break-glass one), one of the partner's end users (an access token from the partner's OpenID
 * provider, reaching only their own customers), or a member of the company's staff (an access token
 * from the company's OpenID provider, reaching the staff operations their roles allow).
 */
export const CALLER_KINDS = [...CLIENT_ROLES, 'end_user', 'staff'] as const;
export type CallerKind = (typeof CALLER_KINDS)[number];

/** The tenant a staff member's requests are made in: every one (staff act for the company, not a partner); the audit log records none. */
export const ALL_TENANTS = '*';

/** The name every end user goes by where a client's name is shown (the person is never named). */
export const END_USER_NAME = 'end-user';

/**
 * Who called, as authentication accepted it and the audit log names it. For an end user, `id` is
 * their pseudonym (a keyed hash of issuer and subject, as a UUID): never the subject itself. For a
 * staff member, `id` is their stable id at the company's provider and `name` their display name:
 * staff are accountable by name.
 */
export interface RecordedClient {
  readonly id: string;
  readonly name: string;
  readonly tenant: string;
  readonly role: CallerKind;
  /** An end user's scopes, as their access token grants them; absent for client tokens. */
  readonly scopes?: readonly string[];
  /** A staff member's roles (their provider's groups, mapped), and whether their sign-in showed a second factor. */
  readonly staff?: { readonly roles: readonly string[]; readonly secondFactor: boolean };
  /** A web app's browser session, when the caller came with one: until when it lasts (never its id or tokens). */
  readonly session?: { readonly expiresAt: Date; readonly idleExpiresAt: Date };
  /** A client's pinned API version (docs/api-contract.md, "Versions"); end users and staff have none. */
  readonly apiVersion?: ApiVersion;
}

/** What a request is about: identifiers only, as every audit event it leaves names them. */
export interface RequestSubject {
  readonly reference?: string;
  readonly customerId?: string;
  readonly currency?: string;
}

/** What identifies a request in a log line: its id (X-Request-Id), and its trace's when sampled. */
export function logContextOf(record: Pick<RequestRecord, 'requestId' | 'traceId'>): { req: { id: string }; trace_id?: string } {
  return record.traceId ? { req: { id: record.requestId }, trace_id: record.traceId } : { req: { id: record.requestId } };
}
