import { UpstreamError } from '../common/upstream';
import { UpstreamReply } from './upstream-http.client';

/** Reads fields out of a provider reply; a reply without what we need is a bad response. */
export class UpstreamResponseMapper {
  constructor(
    private readonly reply: UpstreamReply,
    /** Whether the provider may have acted (a POST) when the reply turns out unusable. */
    private readonly write: boolean,
  ) {}

  private get record(): Record<string, unknown> {
    const data = this.reply.data;
    return data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  }

  optionalString(...names: string[]): string | undefined {
    for (const name of names) {
      const value = this.record[name];
      if (typeof value === 'string' && value !== '') return value;
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    }
    return undefined;
  }

  string(...names: string[]): string {
    const value = this.optionalString(...names);
    if (value === undefined) {
      throw new UpstreamError(
        'UPSTREAM.BAD_RESPONSE',
        'upstream_rejected',
        'The provider’s answer is missing data the gateway needs',
        this.write ? 'unknown' : 'failed',
        { status: this.reply.status, latencyMs: this.reply.latencyMs },
        { details: `Expected ${names.join(' or ')} in the provider's answer.` },
      );
    }
    return value;
  }
}
