// Webhook delivery (docs/webhooks.md): one API process (PROCESS_ROLE=api) and one worker
// (dist/src/worker.js) on one PostgreSQL, against the sandbox, delivering to a receiver on loopback
// that answers 204 at once.
// 1. A backlog: `events` accounts opened with no worker running, then the worker started: events
//    delivered per second by one worker, from its start to the last delivery, and its CPU per delivery.
// 2. Under load: balance reads and account openings (autocannon, `connections`, `duration`), the
//    worker delivering each opening's event meanwhile: the delivery lag (received − the event's
//    created_at) at p50 and p99, beside the API's own figures.
// Every event made must be delivered, once: a missing or repeated one makes the run exit 1.
import { createServer } from 'node:http';
import { benchDatabase, cpuReading, cpuSecondsBetween, fixed, percentile, scratchDir, table } from './support.mjs';
import { bankAccountBody, measure, startBenchGateway, startBenchGatewayProcess, startBenchSandbox } from './throughput.mjs';

/** Not production: the receiver is on loopback, which production refuses (WEBHOOK_LOCAL_URLS). */
const LOCAL = { NODE_ENV: 'test' };

function startReceiver() {
  const received = [];
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.push({ at, id: request.headers['webhook-id'], createdAt: Date.parse(event.created_at) });
      response.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, received, url: `http://127.0.0.1:${server.address().port}/hook` })));
}

async function until(condition, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function webhookDelivery({ events = 2000, connections = 20, duration = 10 } = {}) {
  const log = (message) => process.stderr.write(`[bench] ${message}\n`);
  const database = await benchDatabase(log);
  const dataDir = scratchDir('pgw-bench-webhooks-');
  const { sandbox, sandboxUrl } = await startBenchSandbox(dataDir);
  const receiver = await startReceiver();
  const stops = [];
  try {
    const api = await startBenchGateway({ database, dataDir, sandboxUrl, env: { ...LOCAL, PROCESS_ROLE: 'api' } });
    stops.push(() => api.process.stop());
    const made = await fetch(`${api.url}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, event_types: ['bank_account.created'] }),
    });
    if (made.status !== 201) throw new Error(`the endpoint was not made: ${made.status} ${await made.text()}`);

    // 1. The backlog, with no worker: each opening's event waits in PostgreSQL.
    log(`opening ${events} accounts with no worker running`);
    let opened = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (opened + refused < events) {
          opened++;
          const answer = await fetch(`${api.url}/api/v1/bank-accounts`, {
            method: 'POST',
            headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' },
            body: JSON.stringify(bankAccountBody(api.customerId)),
          });
          await answer.arrayBuffer();
          if (answer.status !== 201) {
            opened--;
            refused++;
          }
        }
      }),
    );
    const backlog = opened;
    log(`starting the worker for ${backlog} waiting events`);
    const worker = await startBenchGatewayProcess({ database, dataDir, sandboxUrl, entry: 'worker.js', env: { ...LOCAL, PROCESS_ROLE: 'worker' } });
    stops.push(() => worker.process.stop());
    const started = Date.now();
    const cpuBefore = cpuReading(worker.pid);
    await until(() => receiver.received.length >= backlog, 300_000, 'the backlog delivered');
    const drainedMs = Math.max(...receiver.received.map((delivery) => delivery.at)) - started;
    const workerCpuMs = 1000 * cpuSecondsBetween(cpuBefore, cpuReading(worker.pid));

    // 2. Under load: the API reads balances and opens accounts; the worker delivers meanwhile.
    const beforeLoad = receiver.received.length;
    const loadStarted = Date.now();
    const load = await measure('balance reads and account openings', api.targets.mixed, {
      connections,
      duration,
      samplePid: api.pid,
      processes: { gateway: { pid: api.pid }, worker: { pid: worker.pid } },
    });
    const openedUnderLoad = await countEvents(database, loadStarted);
    await until(() => receiver.received.length >= beforeLoad + openedUnderLoad, 60_000, 'the events made under load delivered');
    const lags = receiver.received
      .slice(beforeLoad)
      .map((delivery) => delivery.at - delivery.createdAt)
      .sort((a, b) => a - b);
    const ids = receiver.received.map((delivery) => delivery.id);
    const repeated = ids.length - new Set(ids).size;
    return {
      events: backlog,
      refused,
      drainedMs,
      workerCpuMs,
      load,
      underLoad: { delivered: lags.length, p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags.at(-1) ?? NaN },
      repeated,
      failures: refused + repeated + load.failures,
      database: database.description,
    };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await sandbox.stop();
    receiver.server.close();
    await database.stop();
  }
}

/** How many account openings' events were written since `since` (ms). */
async function countEvents(database, since) {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: database.ownerUrl ?? database.url });
  await client.connect();
  try {
    const [{ count }] = (
      await client.query(`SELECT count(*)::int AS count FROM partner_events WHERE type = 'bank_account.created' AND created_at >= to_timestamp($1 / 1000.0)`, [
        since,
      ])
    ).rows;
    return count;
  } finally {
    await client.end();
  }
}

export function report(result) {
  return [
    `PostgreSQL: ${result.database}. One API process, one worker (WEBHOOK_CONCURRENCY 10), a receiver on loopback answering 204.`,
    '',
    table(
      ['Measure', 'Figure'],
      [
        [
          'Backlog delivered by one worker',
          `${result.events} events in ${fixed(result.drainedMs / 1000, 2)} s: ${fixed((1000 * result.events) / result.drainedMs, 0)} events/s`,
        ],
        ["The worker's CPU per delivery", `${fixed(result.workerCpuMs / Math.max(1, result.events), 2)} ms`],
        [
          `API under load (${result.load.name})`,
          `${fixed(result.load.rps, 0)} req/s, p50 ${fixed(result.load.p50, 1)} ms, p99 ${fixed(result.load.p99, 1)} ms; CPU per request: API ${fixed(result.load.cpuMsPerRequest.gateway ?? NaN, 3)} ms, worker ${fixed(result.load.cpuMsPerRequest.worker ?? NaN, 3)} ms`,
        ],
        [
          'Delivery lag under that load (received − created_at)',
          `${result.underLoad.delivered} events: p50 ${fixed(result.underLoad.p50, 0)} ms, p99 ${fixed(result.underLoad.p99, 0)} ms, max ${fixed(result.underLoad.max, 0)} ms`,
        ],
        ['Deliveries repeated (the same webhook-id twice)', String(result.repeated)],
      ],
    ),
  ].join('\n');
}
