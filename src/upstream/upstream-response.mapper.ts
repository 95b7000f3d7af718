import { providerErrors } from './provider-answers';
import { UpstreamReply } from './upstream-http.client';

/** Reads fields out of a provider reply; a reply without what we need is a bad response. */
export class UpstreamResponseMapper {
  constructor(
    private readonly reply: UpstreamReply,
    /** A POST's reply: the provider may have acted when the reply turns out unusable. */
    private readonly method: 'GET' | 'POST',
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
      throw providerErrors.incompleteResponse(this.method, { status: this.reply.status, latencyMs: this.reply.latencyMs }, names.join(' or '));
    }
    return value;
  }
}
