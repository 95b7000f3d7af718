import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RecordedClient, RequestRecord } from '../domain/request-record';
import { CanonicalTarget, canonicalTarget } from './canonical-target';
import type { EdgeStage } from './edge-stage';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id';
import type { DomainError } from '../domain/domain-error';
import type { AuditOperation } from '../domain/audit-operations';

/** How a request ended early at the edge: the error it was answered with, under this id. */
export interface Interruption {
  readonly error: DomainError;
  readonly errorId: string;
}

/** How a request's credentials were presented: an Authorization scheme, or the browser session's cookie. */
export type CredentialKind = 'bearer' | 'dpop' | 'basic' | 'session';

/**
 * Who the request comes from, as the edge's identify stage decided it, once: the caller, or why
 * the credentials it presented were refused, or neither (it presented none). Every later decision
 * (the rate limit, the admin paths, the routes' access check, the audit) reads this.
 */
export interface Identification {
  /** The caller, when the request presented credentials and they were accepted. */
  readonly caller?: RecordedClient;
  /** Why the credentials presented were refused: raised by whatever needs a caller, never for a public route. */
  readonly refusal?: DomainError;
  /** How the credentials were presented; absent when none were. */
  readonly presentedAs?: CredentialKind;
  /** The request is the OpenID provider's back-channel logout: it has its own rate-limit budget (its token is checked by the route). */
  readonly fromIdentityProvider?: boolean;
}

/**
 * Everything the edge knows about one request, in one object: made when the request is first seen
 * (its target is read before routing) and dropped with it. Each field has one writer; nothing else
 * assigns to it.
 *
 * | Field | Writer | When |
 * |---|---|---|
 * | target | contextOf (the canonical reading of the request line) | before routing |
 * | record | contextOf (with the request id: the caller's X-Request-Id when sane, else a new one); then the record's own writers (common/domain/request-record.ts) | before routing |
 * | identity | the identify stage (auth/http/identify.stage.ts) | before the rate limit, for every request |
 * | interruption | the edge's client-error handler (common/http/edge.ts) | the connection timed out or broke mid-request |
 * | leaveDrain | the drain stage (edge.pipeline.ts) | the request is admitted |
 * | auditAs | the admin-paths stage (auth/http/admin-paths.ts) | a request to an admin path is used or refused |
 * | answer | the access guard (auth/http/access.guard.ts), from the route's @ResponseMessage; `recorded`, the answer (common/http/answer.ts) | a controller's route is about to run; its success is recorded |
 * | logged | the request log (common/runtime/logging.ts) | its one line is written |
 */
export class RequestContext {
  readonly target: CanonicalTarget;
  readonly record: RequestRecord;
  /** Who is calling, decided once by the identify stage. */
  identity?: Identification;
  /** How the edge already answered the request (a timeout, a broken connection). */
  interruption?: Interruption;
  /**
   * A request outside the API that is audited all the same, under this operation: an admin path's
   * use (Swagger UI, /metrics, the readiness details), admitted or refused.
   */
  auditAs?: AuditOperation;
  /** A controller's route: its success message (its @ResponseMessage), and whether its success has been recorded. */
  answer?: { readonly message: string | undefined; recorded: boolean };
  /** Leaves the drain's count of requests in flight; called once, when the answer is ready. */
  leaveDrain?: () => void;
  /** The request's log line has been written. */
  logged = false;

  constructor(raw: IncomingMessage) {
    this.target = canonicalTarget(raw.url ?? '/');
    this.record = new RequestRecord(requestIdFor(raw));
  }
}

const CONTEXT = Symbol('request-context');
type WithContext = IncomingMessage & { [CONTEXT]?: RequestContext };

/** The context of this (raw) request, made by whichever sees the request first (the router's rewriteUrl). */
export function contextOf(raw: IncomingMessage): RequestContext {
  const carrier = raw as WithContext;
  return (carrier[CONTEXT] ??= new RequestContext(raw));
}

/** The canonical reading of this request's target (see canonical-target.ts). */
export function targetOf(raw: IncomingMessage): CanonicalTarget {
  return contextOf(raw).target;
}

/** The request's id, as Fastify assigns it (genReqId): the one its context was made with. */
export function requestIdOf(raw: IncomingMessage): string {
  return contextOf(raw).record.requestId;
}

/** The request's audit record. */
export function recordOf(raw: IncomingMessage): RequestRecord {
  return contextOf(raw).record;
}

/**
 * The request each connection is serving, so that Node's refusal of a connection (a timeout, a
 * broken request) can be told to it. Written by the edge's first stage and cleared when the
 * answer has gone.
 */
const serving = new WeakMap<Socket, { readonly request: FastifyRequest; readonly reply: FastifyReply }>();

export function noteServing(request: FastifyRequest, reply: FastifyReply): void {
  serving.set(request.raw.socket, { request, reply });
}

export function servedOn(socket: Socket): { readonly request: FastifyRequest; readonly reply: FastifyReply } | undefined {
  return serving.get(socket);
}

export function noteServed(request: FastifyRequest): void {
  if (serving.get(request.raw.socket)?.request === request) serving.delete(request.raw.socket);
}

/** The first stage: the record learns where the request came from, and the answer carries its id. */
export function requestContextStage(): EdgeStage {
  return {
    name: 'request-context',
    onRequest: (request, reply) => {
      contextOf(request.raw).record.noteArrival(request.ip);
      void reply.header(REQUEST_ID_HEADER, request.id);
    },
  };
}
