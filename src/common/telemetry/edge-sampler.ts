import { randomInt } from 'node:crypto';
import { Context, diag, isSpanContextValid, trace, TraceFlags } from '@opentelemetry/api';
import type { NodeSDKConfiguration } from '@opentelemetry/sdk-node';

type Sampler = NodeSDKConfiguration['sampler'];
type SamplingResult = ReturnType<Sampler['shouldSample']>;
type SamplingDecision = SamplingResult['decision'];

// The SDK's SamplingDecision values (its enum is not loaded here: the SDK is required only when tracing is on).
const NOT_RECORD = 0 as SamplingDecision;
const RECORD_AND_SAMPLED = 2 as SamplingDecision;

const NOT_SAMPLED: SamplingResult = Object.freeze({ decision: NOT_RECORD });
const SAMPLED: SamplingResult = Object.freeze({ decision: RECORD_AND_SAMPLED });

const DRAWS = 2 ** 32;

/**
 * The gateway's sampler: whether a trace that starts here, or comes in from a caller, is sampled is
 * decided here, by a fresh random draw at `ratio`. A caller's `traceparent` is still continued (its
 * trace id and tracestate), but neither its sampled flag nor its trace id, both of which the caller
 * chooses, decide anything. A span under a span of this process follows that span's decision, so a
 * trace is kept or dropped whole.
 */
export class EdgeSampler implements Sampler {
  private readonly bound: number;

  constructor(readonly ratio: number) {
    this.bound = Math.round(Math.min(Math.max(ratio, 0), 1) * DRAWS);
  }

  shouldSample(context: Context): SamplingResult {
    const parent = trace.getSpanContext(context);
    if (parent && isSpanContextValid(parent) && !parent.isRemote) {
      return (parent.traceFlags & TraceFlags.SAMPLED) !== 0 ? SAMPLED : NOT_SAMPLED;
    }
    if (this.bound >= DRAWS) return SAMPLED;
    if (this.bound <= 0) return NOT_SAMPLED;
    return randomInt(0, DRAWS) < this.bound ? SAMPLED : NOT_SAMPLED;
  }

  toString(): string {
    return `EdgeSampler{ratio=${this.ratio}}`;
  }
}

/** The OTEL_TRACES_SAMPLER values honoured as the SDK defines them. */
const SDK_SAMPLERS = new Set(['always_on', 'always_off', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']);

/** OTEL_TRACES_SAMPLER_ARG as the SDK reads it: a ratio in [0, 1]; blank or out of range, 1. */
function ratioOf(env: NodeJS.ProcessEnv): number {
  const text = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (!text) return 1;
  const ratio = Number(text);
  if (Number.isNaN(ratio) || ratio < 0 || ratio > 1) {
    diag.error('OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1: sampling every trace');
    return 1;
  }
  return ratio;
}

/**
 * The sampler for this edge, from OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG:
 * - unset, `traceidratio`, or a value the SDK does not know: the EdgeSampler at the ratio (default
 *   1.0, every trace). `traceidratio` would decide by the trace id, which a caller chooses;
 * - `always_on`, `always_off`: the SDK's (no caller can change them);
 * - `parentbased_always_on`, `parentbased_always_off`, `parentbased_traceidratio`: the SDK's, which
 *   follow the caller's sampled flag. For callers that are trusted (behind a mesh), never the
 *   internet.
 * @returns undefined where the SDK's own sampler applies (it reads the variables itself).
 */
export function edgeSamplerFor(env: NodeJS.ProcessEnv): EdgeSampler | undefined {
  // Matched as the SDK matches it (exactly), so that what is left to the SDK is what it knows.
  if (SDK_SAMPLERS.has(env.OTEL_TRACES_SAMPLER ?? '')) return undefined;
  return new EdgeSampler(ratioOf(env));
}
