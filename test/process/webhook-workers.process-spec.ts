import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { callApi, createCustomer } from '../support/http';
import { Started } from '../support/processes';
import { startReplicas, ReplicaSet } from '../support/replicas';
import { waitFor } from '../support/wait-for';

/** A partner's receiver: every delivery it got, by path; a path it is told to hold is never answered. */
class Receiver {
  readonly got: { path: string; id: string; type: string }[] = [];
  readonly held = new Set<string>();
  private readonly waiting: ServerResponse[] = [];
  private server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((request: IncomingMessage, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string };
        this.got.push({ path, id: String(request.headers['webhook-id']), type: body.type });
        if (this.held.has(path)) {
          this.waiting.push(response);
          return;
        }
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  of(path: string) {
    return this.got.filter((delivery) => delivery.path === path);
  }

  close(): Promise<void> {
    for (const response of this.waiting) response.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Webhook delivery out of the API (docs/operations.md, "The worker"): one API process that runs no
 * background work, and worker processes beside it, on one PostgreSQL. They share the deliveries
 * through the job engine's locks, and a worker killed mid-attempt has its attempt made again by
 * another, with the same webhook-id.
 */
describe('webhook delivery by worker processes', () => {
  let set: ReplicaSet;
  let partner: string;
  const receiver = new Receiver();
  const workers: Started[] = [];
  const api = () => set.replicas[0].base;
  const addEndpoint = async (path: string) => {
    const made = await callApi<{ id: string }>(api(), 'POST', '/api/v1/webhook-endpoints', {
      token: partner,
      body: { url: `http://127.0.0.1:${receiver.port}${path}`, event_types: ['customer.created'] },
    });
    expect(made.status).toBe(201);
    return made.body.data!.id;
  };
  const disable = (id: string) => callApi(api(), 'PATCH', `/api/v1/webhook-endpoints/${id}`, { token: partner, body: { enabled: false } });

  beforeAll(async () => {
    await receiver.start();
    // Not production: the receiver is on loopback, which production refuses (WEBHOOK_LOCAL_URLS).
    set = await startReplicas(1, { NODE_ENV: 'test', PROCESS_ROLE: 'api', WEBHOOK_WORKER_LOST_AFTER_MS: '4000' });
    partner = await set.createClient('partner');
    workers.push(await set.startWorker(), await set.startWorker());
  }, 120_000);
  afterAll(async () => {
    await set?.close();
    await receiver.close();
  });

  it('when two workers run side by side, then every event is delivered once', async () => {
    const endpoint = await addEndpoint('/shared');
    const customers = await Promise.all(Array.from({ length: 30 }, () => createCustomer(api(), partner)));

    const delivered = await waitFor(() => (receiver.of('/shared').length >= customers.length ? receiver.of('/shared') : undefined), {
      timeoutMs: 20_000,
      what: 'every customer.created delivered',
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const ids = receiver.of('/shared').map((delivery) => delivery.id);
    expect(ids).toHaveLength(customers.length);
    expect(new Set(ids).size).toBe(customers.length);
    expect(delivered.every((delivery) => delivery.type === 'customer.created')).toBe(true);
    await disable(endpoint);
  });

  it('when the workers are killed mid-attempt, then the API alone delivers nothing, and a worker started after delivers that attempt again, with the same webhook-id', async () => {
    receiver.held.add('/killed');
    const endpoint = await addEndpoint('/killed');
    await createCustomer(api(), partner);
    const [first] = await waitFor(() => receiver.of('/killed')[0] && receiver.of('/killed'), { timeoutMs: 10_000, what: 'the first attempt' });

    for (const worker of workers) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((worker) => worker.exited));
    receiver.held.delete('/killed');
    // The API process (PROCESS_ROLE=api) runs no delivery: with no worker, an event waits.
    const waiting = await addEndpoint('/waiting');
    await createCustomer(api(), partner);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(receiver.of('/waiting')).toEqual([]);
    await set.startWorker();
    await waitFor(() => receiver.of('/waiting')[0], { timeoutMs: 10_000, what: 'the waiting event delivered once a worker runs' });
    await disable(waiting);

    // The dead workers' heartbeats lapse (4 s here), their job is unlocked, and the new worker runs it.
    const again = await waitFor(() => receiver.of('/killed').filter((delivery) => delivery.id === first.id)[1], {
      timeoutMs: 30_000,
      what: 'the attempt made again',
    });
    expect(again.type).toBe('customer.created');
    const attempts = await waitFor(
      async () => {
        const log = await callApi<{ attempts: { event_id: string; http_status: number | null }[] }>(
          api(),
          'GET',
          `/api/v1/webhook-endpoints/${endpoint}/deliveries`,
          { token: partner },
        );
        const ofFirst = log.body.data!.attempts.filter((attempt) => attempt.event_id === first.id);
        return ofFirst.length > 0 ? ofFirst : undefined;
      },
      { what: 'the attempt logged' },
    );
    expect(attempts.map((attempt) => attempt.http_status)).toEqual([200]);
  });
});
