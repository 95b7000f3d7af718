import { randomUUID } from 'node:crypto';

/**
 * A fault, as POSTed to /__sandbox/faults (see docs/sandbox.md). Applies to requests whose path
 * matches `path` (a regular expression; all paths when absent) and, when given, whose method is
 * `method`. Effects, in order: wait `latency_ms`; then `drop` the connection, or answer `garbage`
 * (200 with a body that is not JSON), or answer `status` (in the provider's error envelope), or,
 * with probability `error_rate`, answer 500. `answer_latency_ms` instead lets the request through at
 * once and holds its answer back: the provider acted, and its answer is late. Limited to `count`
 * requests and/or `duration_ms`.
 */
export interface FaultSpec {
  readonly path?: string;
  readonly method?: string;
  readonly latency_ms?: number;
  readonly answer_latency_ms?: number;
  readonly drop?: boolean;
  readonly garbage?: boolean;
  readonly status?: number;
  readonly error_rate?: number;
  readonly retry_after?: number;
  readonly count?: number;
  readonly duration_ms?: number;
}

export interface Fault extends FaultSpec {
  readonly id: string;
  remaining?: number;
  readonly expiresAt?: number;
  readonly pattern: RegExp;
  hits: number;
}

export type FaultEffect =
  | { kind: 'none'; latencyMs: number; answerLatencyMs?: number }
  | { kind: 'drop'; latencyMs: number }
  | { kind: 'garbage'; latencyMs: number }
  | { kind: 'status'; latencyMs: number; status: number; retryAfter?: number };

function isNumberIn(value: unknown, min: number, max: number): boolean {
  return value === undefined || (typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max);
}

export class FaultBook {
  private faults: Fault[] = [];

  /** Validates and adds a fault; returns it, or a list of problems. */
  add(spec: unknown): Fault | string[] {
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return ['the body must be a JSON object'];
    const s = spec as Record<string, unknown>;
    const known = ['path', 'method', 'latency_ms', 'answer_latency_ms', 'drop', 'garbage', 'status', 'error_rate', 'retry_after', 'count', 'duration_ms'];
    const problems = Object.keys(s)
      .filter((k) => !known.includes(k))
      .map((k) => `${k} is not a fault setting`);
    let pattern = /.*/;
    if (s.path !== undefined) {
      try {
        if (typeof s.path !== 'string') throw new TypeError('not a string');
        pattern = new RegExp(s.path);
      } catch {
        problems.push('path must be a regular expression');
      }
    }
    if (s.method !== undefined && typeof s.method !== 'string') problems.push('method must be a string');
    if (!isNumberIn(s.latency_ms, 0, 120_000)) problems.push('latency_ms must be 0..120000');
    if (!isNumberIn(s.answer_latency_ms, 0, 120_000)) problems.push('answer_latency_ms must be 0..120000');
    if (!isNumberIn(s.status, 100, 599)) problems.push('status must be an HTTP status');
    if (!isNumberIn(s.error_rate, 0, 1)) problems.push('error_rate must be 0..1');
    if (!isNumberIn(s.retry_after, 0, 3600)) problems.push('retry_after must be 0..3600 seconds');
    if (!isNumberIn(s.count, 1, 1_000_000)) problems.push('count must be a positive number');
    if (!isNumberIn(s.duration_ms, 1, 86_400_000)) problems.push('duration_ms must be a positive number');
    for (const flag of ['drop', 'garbage']) if (s[flag] !== undefined && typeof s[flag] !== 'boolean') problems.push(`${flag} must be true or false`);
    if (problems.length > 0) return problems;
    const fault: Fault = {
      ...(s as FaultSpec),
      id: randomUUID(),
      pattern,
      remaining: s.count as number | undefined,
      expiresAt: typeof s.duration_ms === 'number' ? Date.now() + s.duration_ms : undefined,
      hits: 0,
    };
    this.faults.unshift(fault);
    return fault;
  }

  clear(): void {
    this.faults = [];
  }

  list(): Fault[] {
    this.expire();
    return [...this.faults];
  }

  /** The effect for this request, consuming one use of the fault that matched. */
  effectFor(method: string, path: string): FaultEffect {
    this.expire();
    const fault = this.faults.find((f) => f.pattern.test(path) && (!f.method || f.method.toUpperCase() === method));
    if (!fault) return { kind: 'none', latencyMs: 0 };
    fault.hits++;
    if (fault.remaining !== undefined) fault.remaining--;
    const latencyMs = fault.latency_ms ?? 0;
    if (fault.drop) return { kind: 'drop', latencyMs };
    if (fault.garbage) return { kind: 'garbage', latencyMs };
    if (fault.status !== undefined) return { kind: 'status', latencyMs, status: fault.status, retryAfter: fault.retry_after };
    if (fault.error_rate !== undefined && Math.random() < fault.error_rate) return { kind: 'status', latencyMs, status: 500 };
    return { kind: 'none', latencyMs, answerLatencyMs: fault.answer_latency_ms };
  }

  private expire(): void {
    const now = Date.now();
    this.faults = this.faults.filter((f) => (f.remaining === undefined || f.remaining > 0) && (f.expiresAt === undefined || f.expiresAt > now));
  }
}
