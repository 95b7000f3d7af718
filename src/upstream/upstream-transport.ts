import type { IncomingHttpHeaders } from 'node:http';
import { Agent, Dispatcher } from 'undici';

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
/** The answer did not come in time (UPSTREAM_TIMEOUT_MS): the provider may have the request. */
export class TimedOut extends Error {}

/** A larger answer is read and dropped: nothing the gateway needs is that big. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | undefined)?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * What a failed attempt was, by whether undici began to write it: a request never handed to a
 * connection (refused, unresolved, unreachable, the agent closed) cannot have reached the
 * provider, whatever the error says; once begun, it may have, whatever the error says. (Apart
 * from the connect timeout, which ends an attempt before anything is sent, a timeout is never
 * undici's: the attempt's own timer is the only one.)
 */
function failureOf(error: unknown, begun: boolean): Error {
  const code = errorCode(error) ?? 'connection';
  return begun ? new ConnectionLost(code, { cause: error }) : new NotSent(code, { cause: error });
}

/**
 * One attempt over undici, on a pool of keep-alive connections, through its dispatch interface:
 * the answer is collected as it arrives (no stream, no abort signal), within one timer that bounds
 * the whole attempt, from being queued for a connection to the answer's last byte. Failures come
 * out as NotSent (never handed to a connection: safe to retry), TimedOut or ConnectionLost (the
 * provider may have the request).
 */
export class UpstreamTransport {
  private readonly agent: Agent;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly timeoutMs: number;

  constructor(settings: { readonly baseUrl: string; readonly connectTimeoutMs: number; readonly timeoutMs: number }) {
    const base = new URL(settings.baseUrl);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/$/, '');
    this.timeoutMs = settings.timeoutMs;
    this.agent = new Agent({
      connect: { timeout: settings.connectTimeoutMs },
      // The attempt's own timer (below) bounds the whole exchange. undici's header and body
      // timeouts are off: they would only repeat it, and each request would leave one of its
      // coarse timers (an object kept for up to half a second, so promoted) behind.
      headersTimeout: 0,
      bodyTimeout: 0,
      keepAliveTimeout: 10_000,
    });
  }

  /** One attempt: `path` is under the base URL's path. */
  send(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body: string | undefined): Promise<RawResponse> {
    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      let controller: Dispatcher.DispatchController | undefined;
      let status = 0;
      let retryAfter: string | undefined;
      let size = 0;
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        const timedOut = new TimedOut(`no answer within ${this.timeoutMs} ms`);
        controller?.abort(timedOut);
        reject(timedOut);
      }, this.timeoutMs);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (started) => {
          controller = started;
          if (settled) started.abort(new TimedOut('the attempt timed out before it started'));
        },
        onResponseStart: (_controller, statusCode: number, responseHeaders: IncomingHttpHeaders) => {
          status = statusCode;
          const value = responseHeaders['retry-after'];
          retryAfter = typeof value === 'string' ? value : undefined;
        },
        onResponseData: (_controller, chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_RESPONSE_BYTES) chunks.push(chunk);
          // Read on to the end (the answer is then no JSON), keeping none of it.
          else chunks.length = 0;
        },
        onResponseEnd: () => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          const text = size > MAX_RESPONSE_BYTES ? '' : chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
          resolve({ status, retryAfter, text });
        },
        onResponseError: (_controller, error: Error) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          reject(failureOf(error, controller !== undefined));
        },
      };
      try {
        this.agent.dispatch({ origin: this.origin, path: this.basePath + path, method, headers, body }, handler);
      } catch (error) {
        // Refused before anything was queued (the agent closed, say): nothing was sent.
        clearTimeout(timer);
        settled = true;
        reject(failureOf(error, false));
      }
    });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
