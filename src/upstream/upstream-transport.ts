import { Agent, request } from 'undici';

/** A provider answer as it came off the wire, before it means anything. */
export interface RawResponse {
  readonly status: number;
  readonly retryAfter?: string;
  readonly text: string;
}

/** Nothing reached the provider (no connection was made): any method may be retried. */
export class NotSent extends Error {}
/** The connection failed after the request may have been written. */
export class ConnectionLost extends Error {}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
/** A larger answer is read and dropped: nothing the gateway needs is that big. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | undefined)?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * One attempt over undici, on a pool of keep-alive connections. Network failures come out as
 * NotSent (safe to retry) or ConnectionLost (the provider may have the request); an aborted
 * attempt (the resilience policy's timeout) rethrows as it was.
 */
export class UpstreamTransport {
  private readonly agent: Agent;

  constructor(settings: { readonly connectTimeoutMs: number; readonly timeoutMs: number }) {
    this.agent = new Agent({
      connect: { timeout: settings.connectTimeoutMs },
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      keepAliveTimeout: 10_000,
    });
  }

  async send(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal): Promise<RawResponse> {
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(url, { method, headers, body, signal, dispatcher: this.agent });
    } catch (error) {
      if (signal.aborted) throw error;
      const code = errorCode(error);
      throw code && NOT_SENT_CODES.has(code) ? new NotSent(code, { cause: error }) : new ConnectionLost(code ?? 'connection', { cause: error });
    }
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      if (signal.aborted) throw error;
      throw new ConnectionLost(errorCode(error) ?? 'body', { cause: error });
    }
    const retryAfter = response.headers['retry-after'];
    return {
      status: response.statusCode,
      retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
      text: text.length > MAX_RESPONSE_BYTES ? '' : text,
    };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
