import { createServer } from 'node:http';
import { DestinationPolicy } from '../domain/destination-policy';
import { UndiciWebhookTransport } from './undici-webhook-transport';

/**
 * The check as each attempt connects: a name that resolves to a refused address is not connected
 * to (a receiver listens there, and hears nothing), whatever the URL looked like when it was saved.
 */
describe('UndiciWebhookTransport', () => {
  it('when a name resolves to a loopback address under the production policy, then the attempt is refused before connecting; allowed, it is delivered', async () => {
    let heard = 0;
    const server = createServer((_request, response) => {
      heard++;
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const production = new UndiciWebhookTransport(new DestinationPolicy(false));
    const development = new UndiciWebhookTransport(new DestinationPolicy(true));
    try {
      expect(await production.post(`http://localhost:${port}/hook`, {}, '{}')).toMatchObject({ failure: 'refused_address' });
      expect(await production.post(`http://127.0.0.1:${port}/hook`, {}, '{}')).toMatchObject({ failure: 'refused_address', latencyMs: 0 });
      expect(heard).toBe(0);
      expect(await development.post(`http://localhost:${port}/hook`, {}, '{}')).toMatchObject({ status: 204 });
      expect(heard).toBe(1);
    } finally {
      await production.onApplicationShutdown();
      await development.onApplicationShutdown();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('when the endpoint redirects, then the redirect is not followed and the attempt failed', async () => {
    let followed = false;
    const server = createServer((request, response) => {
      if (request.url === '/elsewhere') followed = true;
      response.writeHead(302, { location: '/elsewhere' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const transport = new UndiciWebhookTransport(new DestinationPolicy(true));
    try {
      expect(await transport.post(`http://127.0.0.1:${port}/hook`, {}, '{}')).toMatchObject({ status: 302, failure: 'redirect' });
      expect(followed).toBe(false);
    } finally {
      await transport.onApplicationShutdown();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
