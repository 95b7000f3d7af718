import { connect } from 'node:net';

/** What came back on a raw connection: the first response, parsed, and whether the server closed. */
export interface RawAnswer {
  readonly status?: number;
  readonly headers: Record<string, string>;
  readonly text: string;
  /** The body parsed as JSON, when it is JSON. */
  readonly body?: {
    status: number;
    data: unknown;
    message: string;
    error: { id: string; details: string; message: string; fields?: { field: string; message: string }[]; doc_url?: string } | null;
  };
  readonly closedByServer: boolean;
}

/**
 * Sends bytes exactly as given — request lines a client library would normalise or refuse — and
 * reads until the server closes or `waitMs` passes. `hangUpAfterMs` closes from our side instead.
 */
export function rawExchange(baseUrl: string, request: string | Buffer, options: { waitMs?: number; hangUpAfterMs?: number } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let closedByServer = false;
    let settled = false;
    const socket = connect(Number(port), hostname, () => socket.write(request));
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(hangUp);
      socket.destroy();
      resolve(parse(Buffer.concat(chunks).toString('utf8'), closedByServer));
    };
    const timer = setTimeout(finish, options.waitMs ?? 5000);
    const hangUp = options.hangUpAfterMs === undefined ? undefined : setTimeout(finish, options.hangUpAfterMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => {
      closedByServer = true;
      finish();
    });
    socket.on('close', finish);
    socket.on('error', (error) => (chunks.length > 0 ? finish() : reject(error)));
  });
}

function parse(text: string, closedByServer: boolean): RawAnswer {
  const split = text.indexOf('\r\n\r\n');
  if (split === -1) return { headers: {}, text, closedByServer };
  const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  let payload = text.slice(split + 4);
  if (headers['transfer-encoding'] === 'chunked') payload = dechunk(payload);
  let body: RawAnswer['body'];
  try {
    body = JSON.parse(payload) as RawAnswer['body'];
  } catch {
    body = undefined;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, text, body, closedByServer };
}

function dechunk(payload: string): string {
  let out = '';
  let rest = payload;
  while (rest.length > 0) {
    const lineEnd = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (!(size > 0)) break;
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 4 + size);
  }
  return out;
}

/** One HTTP/1.1 request as text, closing the connection after it. */
export function requestText(method: string, target: string, headers: Record<string, string> = {}, body?: string): string {
  const lines = [
    `${method} ${target} HTTP/1.1`,
    'Host: gateway.test',
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}
