import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestContext {
  readonly requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `work` with `context` visible to everything it calls, however deep. */
export function runWithRequestContext<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}

/** The current request's context; undefined outside a request (start-up, CLIs). */
export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}
