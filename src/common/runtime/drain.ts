import { DomainError } from '../domain/domain-error';
import { isUnder } from '../http/canonical-target';
import type { EdgeStage } from '../http/edge-stage';
import { contextOf } from '../http/request-context';

export class ShuttingDown extends DomainError {
  constructor() {
    super('SERVICE.SHUTTING_DOWN', {
      details: 'Another instance answers the retry; a POST retried with the same reference is not duplicated',
      retryAfterSeconds: 1,
    });
  }
}

/**
 * The requests this instance is serving, and whether it is shutting down. Once draining, new
 * requests are refused with ShuttingDown (readiness included) while those in flight finish.
 */
export class Drain {
  private inFlight = 0;
  private draining = false;
  private readonly waiters = new Set<() => void>();

  get isDraining(): boolean {
    return this.draining;
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** A request started; call the returned function once, when its connection is done with it. */
  enter(): () => void {
    this.inFlight += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const wake of this.waiters) wake();
    };
  }

  begin(): void {
    this.draining = true;
  }

  /** Resolves true once nothing is in flight, or false when `timeoutMs` passes first. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        resolve(false);
      }, timeoutMs);
      this.waiters.add(wake);
    });
  }
}

/**
 * The drain stage: while draining, a new request is refused (ShuttingDown, with Connection: close)
 * except the health probes; an admitted request counts as in flight until its answer is ready. A
 * request is done then even if its caller has gone: the work behind a closed connection (a provider
 * call, its audit event) still finishes before the pool closes.
 */
export function drainStage(drain: Drain): EdgeStage {
  return {
    name: 'drain',
    onRequest: (request, reply) => {
      const context = contextOf(request.raw);
      if (drain.isDraining && !isUnder('/health', context.target.path)) {
        void reply.header('connection', 'close');
        throw new ShuttingDown();
      }
      context.leaveDrain = drain.enter();
    },
    onSend: (request) => contextOf(request.raw).leaveDrain?.(),
  };
}
