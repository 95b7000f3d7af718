import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConnectionLost, TimedOut, UpstreamTransport } from './upstream-transport';

/**
 * The attempt's own timer is the only timeout on a provider call (undici's header and body
 * timeouts are off): these hold that it still bounds an answer that never starts, one whose body
 * stops half way and one whose body trickles in (which an idle timer would never end), over a real
 * loopback connection, and that the gateway's side then closes the connection.
 */
describe('UpstreamTransport', () => {
  let server: Server;
  let baseUrl: string;
  const sockets = new Set<Socket>();
  let answer: (response: ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((_request, response) => answer(response));
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  });

  afterEach(() => {
    for (const socket of sockets) socket.destroy();
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  /** Once the server holds no connection: the gateway's side has closed every one (a test that never gets there fails on its bound). */
  const allClosed = async () => {
    while (sockets.size > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  /** A timed-out attempt must fail, and its connection close, long before this (its timer is 300 ms), not when the test gives up. */
  const BOUND_MS = 10_000;
  const transport = (timeoutMs: number) => new UpstreamTransport({ baseUrl, connectTimeoutMs: 1000, timeoutMs });
  const json = { 'content-type': 'application/json' };

  it('when the answer comes whole, then its status, Retry-After and text come back', async () => {
    answer = (response) => response.writeHead(429, { 'retry-after': '3', ...json }).end('{"error":"slow down"}');
    const sut = transport(5000);

    await expect(sut.send('GET', '/balance/x', {}, undefined)).resolves.toEqual({ status: 429, retryAfter: '3', text: '{"error":"slow down"}' });
    await sut.close();
  });

  it.each<[string, (response: ServerResponse) => void]>([
    ['no answer starts', () => undefined],
    [
      'the answer stops half way through its body',
      (response) => {
        response.writeHead(200, { ...json, 'content-length': '100' });
        response.write('{"available":');
      },
    ],
    [
      'the body trickles in, a byte every 50 ms',
      (response) => {
        response.writeHead(200, { ...json, 'content-length': '1000' });
        const drip = setInterval(() => response.write(' '), 50);
        response.on('close', () => clearInterval(drip));
      },
    ],
  ])(
    'when %s, then the attempt fails as timed out and its connection is closed',
    async (_case, provider) => {
      answer = provider;
      const sut = transport(300);

      await expect(sut.send('POST', '/customers', json, '{}')).rejects.toBeInstanceOf(TimedOut);
      await allClosed();
      await sut.close();
    },
    BOUND_MS,
  );

  it('when the connection is cut after the request was written, then the attempt fails as a lost connection', async () => {
    answer = (response) => response.socket?.destroy();
    const sut = transport(5000);

    await expect(sut.send('POST', '/customers', json, '{}')).rejects.toBeInstanceOf(ConnectionLost);
    await sut.close();
  });
});
