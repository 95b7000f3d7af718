import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { IncomingMessage } from 'node:http';

/** What the last provider call of a request came to. */
export interface UpstreamCallRecord {
  status?: number;
  errorId?: string;
  latencyMs?: number;
}

/**
 * One request's facts, gathered while it runs and read when it is recorded: who called, what the
 * request is about (identifiers only), what the provider said.
 */
export interface RequestContext {
  readonly requestId: string;
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  /** The caller's address as the service sees it (behind TRUST_PROXY, the forwarded one). */
  sourceIp?: string;
  client?: { readonly id: string; readonly name: string; readonly tenant: string };
  reference?: string;
  customerId?: string;
  currency?: string;
  upstream?: UpstreamCallRecord;
  /** An `attempted` event was committed: a provider call may have happened. */
  attempted?: boolean;
  /** The response is a replay from the idempotency store. */
  replayed?: boolean;
  /** The terminal event has been written, or its writing failed: never twice. */
  concluded?: boolean;
}

const storage = new AsyncLocalStorage<RequestContext>();
const CONTEXT = Symbol('request-context');
type WithContext = IncomingMessage & { [CONTEXT]?: RequestContext };

export function newRequestContext(requestId: string, sourceIp?: string): RequestContext {
  return { requestId, startedAt: performance.now(), sourceIp };
}

/** Runs `work` with `context` visible to everything it calls, however deep. */
export function runWithRequestContext<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}

/** The current request's context; undefined outside a request (start-up, CLIs). */
export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}

/**
 * The context of this (raw) request, created by whichever sees the request first: Nest middleware
 * (which makes it current for the handler) or the service's onRequest hook.
 */
export function requestContextOf(raw: IncomingMessage): RequestContext {
  const carrier = raw as WithContext;
  const id = (raw as { id?: unknown }).id;
  carrier[CONTEXT] ??= newRequestContext(typeof id === 'string' ? id : 'unknown');
  return carrier[CONTEXT];
}
