import { waitFor } from '../support/wait-for';
import { join } from 'node:path';
import { buildBankAccountRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { cleanEnv, clusterPid, listeningPorts, removeDataDir, scratchDataDir, startProcess, Started, waitForOutput } from '../support/processes';

/**
 * SIGTERM with requests in flight, on the built service with its embedded defaults (its own
 * PostgreSQL, the in-process sandbox made slow with a latency fault).
 */
const MAIN = join(process.cwd(), 'dist', 'dev', 'main.js');

interface Running {
  readonly service: Started;
  readonly base: string;
  readonly partner: string;
  readonly admin: string;
}

describe('graceful shutdown', () => {
  let dataDir: string;
  let sandboxPort: number;
  let running: Running | undefined;

  const sandbox = (path: string) => `http://127.0.0.1:${sandboxPort}${path}`;

  async function start(extra: Record<string, string> = {}): Promise<Running> {
    // Both listen on a port of their own choosing, read from what the service prints.
    const service = startProcess(
      MAIN,
      [],
      cleanEnv({ DATA_DIR: dataDir, PORT: '0', SANDBOX_PORT: '0', DEV_OIDC_PORT: '0', DEV_STAFF_OIDC_PORT: '0', ...extra }),
    );
    await waitForOutput(service, /Partner gateway listening/);
    const ports = listeningPorts(service);
    sandboxPort = ports.sandboxPort;
    const base = `http://127.0.0.1:${ports.port}`;
    if (!running) {
      const partner = service.output().match(/partner\s+(pgw_[A-Za-z0-9_-]+)/)![1];
      const admin = service.output().match(/admin\s+(pgw_[A-Za-z0-9_-]+)/)![1];
      return { service, base, partner, admin };
    }
    return { ...running, service, base };
  }

  async function slowDownAccounts(latencyMs: number): Promise<void> {
    await fetch(sandbox('/__sandbox/faults'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'account', method: 'POST', latency_ms: latencyMs }),
    });
  }

  async function untilSandboxHas(count: number): Promise<void> {
    await waitFor(
      async () => {
        const { requests } = (await (await fetch(sandbox('/__sandbox/requests'))).json()) as { requests: { path: string }[] };
        return requests.filter((r) => r.path.includes('account')).length >= count;
      },
      { timeoutMs: 10_000, what: `${count} account calls at the sandbox` },
    );
  }

  type Event = { phase: string; http_status: number | null };
  async function eventsOf(reference: string): Promise<Event[]> {
    const answer = await callApi<{ events: Event[] }>(running!.base, 'GET', `/api/v1/audit-events?reference=${reference}&reason=shutdown-test`, {
      token: running!.admin,
    });
    return [...answer.body.data!.events].reverse();
  }

  beforeAll(async () => {
    dataDir = scratchDataDir();
  });

  afterEach(async () => {
    // A test that failed half-way leaves a service running: stop it the clean way (its database too).
    if (running && running.service.child.exitCode === null) {
      running.service.child.kill('SIGTERM');
      const killer = setTimeout(() => running!.service.child.kill('SIGKILL'), 15_000);
      await running.service.exited;
      clearTimeout(killer);
    }
  });

  afterAll(async () => {
    await removeDataDir(dataDir);
  });

  it('when SIGTERM arrives with requests in flight, then readiness and new requests get 503 while those finish and are audited, then the database stops', async () => {
    running = await start();
    const customerId = await createCustomer(running.base, running.partner);
    await slowDownAccounts(1500);
    const bodies = [0, 1, 2].map(() => buildBankAccountRequest({ customer_id: customerId }));
    const inFlight = bodies.map((body) => callApi(running!.base, 'POST', '/api/v1/bank-accounts', { token: running!.partner, body }));
    await untilSandboxHas(3);

    running.service.child.kill('SIGTERM');
    await waitForOutput(running.service, /Shutting down/);
    const ready = await fetch(`${running.base}/health/ready`);
    const readyBody = (await ready.json()) as { error: { id: string; message: string } };
    const live = await fetch(`${running.base}/health/live`);
    const refused = await callApi(running.base, 'POST', '/api/v1/customers', { token: running.partner, body: {} });
    const finished = await Promise.all(inFlight);
    const code = await running.service.exited;

    expect(ready.status).toBe(503);
    expect(readyBody.error.message).toContain('shutting down');
    expect(live.status).toBe(200);
    expect(refused.status).toBe(503);
    expect(refused.body.error!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(finished.map((answer) => answer.status)).toEqual([201, 201, 201]);
    expect(code).toBe(0);
    expect(running.service.output()).toContain('"msg":"Stopped"');
    expect(running.service.output()).not.toContain('Grace period over');
    expect(running.service.output()).not.toContain('UnknownElementException');
    expect(clusterPid(dataDir)).toBeUndefined();

    running = await start();
    for (const body of bodies) {
      expect(await eventsOf(body.reference as string)).toEqual([
        expect.objectContaining({ phase: 'attempted' }),
        expect.objectContaining({ phase: 'succeeded', http_status: 201 }),
      ]);
    }
    running.service.child.kill('SIGINT');
    expect(await running.service.exited).toBe(0);
  });

  it('when a request outlasts SHUTDOWN_GRACE_MS, then its connection is closed at the deadline, yet its outcome is recorded and a retry replays it', async () => {
    running = await start({ SHUTDOWN_GRACE_MS: '300' });
    const customerId = await createCustomer(running.base, running.partner);
    await slowDownAccounts(2500);
    const body = buildBankAccountRequest({ customer_id: customerId });
    const cut = callApi(running.base, 'POST', '/api/v1/bank-accounts', { token: running.partner, body }).then(
      (answer) => answer.status,
      (error: Error) => error.name,
    );
    await untilSandboxHas(1);

    running.service.child.kill('SIGTERM');
    const outcome = await cut;
    const code = await running.service.exited;

    expect(outcome).toBe('TypeError'); // fetch failed: the connection was closed, no answer
    expect(code).toBe(0);
    expect(running.service.output()).toMatch(/"cut":1,"unsettled":0,"msg":"Grace period over/);
    expect(clusterPid(dataDir)).toBeUndefined();

    running = await start();
    expect(await eventsOf(body.reference as string)).toEqual([
      expect.objectContaining({ phase: 'attempted' }),
      expect.objectContaining({ phase: 'succeeded', http_status: 201 }),
    ]);
    const retried = await callApi(running.base, 'POST', '/api/v1/bank-accounts', { token: running.partner, body });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    running.service.child.kill('SIGINT');
    expect(await running.service.exited).toBe(0);
  });
});
