// Throughput and latency on loopback: the same two calls straight to the sandbox, through a bare
// Fastify + undici proxy, and through the gateway (auth, validation, tenancy, idempotency, audit,
// signing, encryption). Every server runs in a process of its own; autocannon runs here.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { benchDatabase, cpuReading, cpuSecondsBetween, dist, fixed, freePort, machineCpu, memoryOf, userAndSystemSecondsOf, postmasterOf, ROOT, scratchDir, startNode, table } from './support.mjs';

const SANDBOX_TOKEN = 'sbx_bench_token_0123456789abcdef';

function expiryInTwoYears() {
  const today = new Date();
  return new Date(Date.UTC(today.getUTCFullYear() + 2, today.getUTCMonth(), 1)).toISOString().slice(0, 10);
}

function bankAccountBody(customerId) {
  return {
    customer_id: customerId,
    currency: 'EUR',
    phone_number: '+4915123456789',
    reference: randomUUID(),
    document_type: 'passport',
    document_number: 'C01X00T47',
    issued_country_code: 'DE',
    issued_by: 'Stadt Berlin',
    issued_date: '2020-01-15',
    expiration_date: expiryInTwoYears(),
    country: 'DE',
    zip_code: '10115',
    street: 'Invalidenstrasse 1',
    state: 'Berlin',
    date_of_birth: '1990-12-10',
  };
}

function run(options) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false });
  });
}

/** CPU readings of each process that takes part, of the load generator (this one), of the machine. */
function cpuNow(processes) {
  const usage = process.cpuUsage();
  return {
    ...Object.fromEntries(Object.entries(processes).map(([name, { pid, tree }]) => [name, cpuReading(pid, { tree })])),
    'load generator': new Map([[process.pid, (usage.user + usage.system) / 1e6]]),
    machine: new Map([[0, machineCpu().busy]]),
  };
}

/**
 * One scenario: a warm-up, then the measured run. Each connection sends its next request as soon
 * as the last is answered; with `rate`, no faster than that many requests per second in all.
 */
async function measure(name, options, { connections, duration, samplePid, processes = {}, rate }) {
  const paced = rate ? { overallRate: rate } : {};
  await run({ ...options, ...paced, connections, duration: 2 });
  let peak = 0;
  const sampler = samplePid ? setInterval(() => (peak = Math.max(peak, memoryOf(samplePid).rssMiB)), 100) : undefined;
  const kernelBefore = samplePid ? userAndSystemSecondsOf(samplePid) : undefined;
  const before = cpuNow(processes);
  const wallBefore = process.hrtime.bigint();
  const result = await run({ ...options, ...paced, connections, duration });
  const wallSeconds = Number(process.hrtime.bigint() - wallBefore) / 1e9;
  const after = cpuNow(processes);
  const kernelAfter = samplePid ? userAndSystemSecondsOf(samplePid) : undefined;
  if (sampler) clearInterval(sampler);
  const failures = result.errors + result.timeouts + result.non2xx;
  const total = result.requests.total;
  const cpuMsPerRequest = Object.fromEntries(Object.keys(after).map((key) => [key, (1000 * cpuSecondsBetween(before[key], after[key])) / Math.max(1, total)]));
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures,
    total,
    peakRssMiB: peak || undefined,
    cpuMsPerRequest,
    machineBusy: cpuSecondsBetween(before.machine, after.machine) / (wallSeconds * availableCpus()),
    /** Of the measured process's CPU time, the share spent in the kernel. */
    kernelShare: kernelBefore ? (kernelAfter[1] - kernelBefore[1]) / (kernelAfter[0] + kernelAfter[1] - kernelBefore[0] - kernelBefore[1]) : undefined,
  };
}

const availableCpus = () => (typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);

export async function throughput({ connections = 50, duration = 10, rate = 200, profile = false, calls = ['balance', 'bank account'] } = {}) {
  const log = (message) => process.stderr.write(`[bench] ${message}\n`);
  const dataDir = scratchDir('pgw-bench-run-');
  const database = await benchDatabase(log);
  log(`database: ${database.description}`);
  const started = [];
  try {
    const sandboxPort = await freePort();
    const sandbox = await startNode(
      ['dist/src/sandbox/main.js'],
      { DATA_DIR: dataDir, SANDBOX_PORT: String(sandboxPort), SANDBOX_BEARER_TOKEN: SANDBOX_TOKEN, LOG_LEVEL: 'warn' },
      /Point a gateway at this sandbox/,
    );
    started.push(sandbox);
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;

    const servicePort = await freePort();
    const profileDir = join(ROOT, 'bench', 'profiles');
    const service = await startNode(
      [...(profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), 'dist/src/main.js'],
      {
        NODE_ENV: 'production',
        PORT: String(servicePort),
        LOG_LEVEL: 'info',
        DATABASE_URL: database.url,
        UPSTREAM_BASE_URL: sandboxUrl,
        UPSTREAM_BEARER_TOKEN: SANDBOX_TOKEN,
        UPSTREAM_PUBLIC_KEY: join(dataDir, 'sandbox', 'public.pem'),
        RATE_LIMIT_PER_MINUTE: '1000000',
        RATE_LIMIT_PER_IP_PER_MINUTE: '1000000',
        AUDIT_PURGE_DAILY: 'false',
      },
      /Partner gateway listening/,
    );
    started.push(service);
    const serviceUrl = `http://127.0.0.1:${servicePort}`;

    const proxyPort = await freePort();
    const proxy = await startNode(['bench/bare-proxy.mjs'], { TARGET: sandboxUrl, PORT: String(proxyPort) }, /bare proxy listening/);
    started.push(proxy);
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;

    // A partner client, and one customer of its, created the way partners do.
    const created = await startNode(['dist/src/auth/cli/clients.cli.js', 'create', '--name', 'bench', '--role', 'partner'], { DATABASE_URL: database.url, LOG_LEVEL: 'warn' }, /"token"/);
    const token = JSON.parse(created.output().trim().split('\n').find((line) => line.includes('"token"'))).token;
    const customerAnswer = await fetch(`${serviceUrl}/api/v1/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone_number: '+447700900123', date_of_birth: '1990-12-10', country: 'GB' }),
    });
    const customerId = (await customerAnswer.json()).data.customer_id;

    // Provider-side requests, sealed and signed ahead of time so the load generator only sends.
    const { readUpstreamPublicKey } = dist('config/upstream-public-key.js');
    const { JwePayloadCipher } = dist('upstream/payload-cipher.js');
    const { RequestSigner } = dist('upstream/request-signer.js');
    const pem = readFileSync(join(dataDir, 'sandbox', 'public.pem'), 'utf8');
    const key = readUpstreamPublicKey(pem);
    const cipher = new JwePayloadCipher(key.key);
    const signer = new RequestSigner(key.pem);
    const providerAuth = { authorization: `Bearer ${SANDBOX_TOKEN}`, accept: 'application/json' };

    const sealedCount = Math.ceil(duration * 6000) + 20_000;
    log(`sealing ${sealedCount} provider requests ahead of time`);
    const sealed = [];
    for (let i = 0; i < sealedCount; i++) {
      const body = bankAccountBody(customerId);
      sealed.push({ body: JSON.stringify(await cipher.seal(body)), signature: signer.sign(body.reference) });
    }
    let next = 0;
    const sealedRequest = (path) => ({
      method: 'POST',
      path,
      setupRequest: (request) => {
        const one = sealed[next++ % sealed.length];
        return { ...request, body: one.body, headers: { ...providerAuth, 'content-type': 'application/json', signature: one.signature } };
      },
    });

    const postmaster = await postmasterOf(database.url);
    const processes = {
      gateway: { pid: service.child.pid },
      sandbox: { pid: sandbox.child.pid },
      'bare proxy': { pid: proxy.child.pid },
      ...(postmaster ? { PostgreSQL: { pid: postmaster, tree: true } } : {}),
    };
    const balancePath = `/api/v1/customer/balance/${customerId}`;
    const targets = {
      balance: {
        'sandbox directly': { url: sandboxUrl, requests: [{ method: 'GET', path: balancePath, headers: providerAuth }] },
        'bare proxy': { url: proxyUrl, requests: [{ method: 'GET', path: balancePath, headers: providerAuth }] },
        gateway: { url: serviceUrl, requests: [{ method: 'GET', path: `/api/v1/customers/${customerId}/balance`, headers: { authorization: `Bearer ${token}` } }] },
      },
      'bank account': {
        'sandbox directly': { url: sandboxUrl, requests: [sealedRequest('/payments/banks/account')] },
        'bare proxy': { url: proxyUrl, requests: [sealedRequest('/payments/banks/account')] },
        gateway: {
          url: serviceUrl,
          requests: [
            {
              method: 'POST',
              path: '/api/v1/bank-accounts',
              setupRequest: (request) => ({
                ...request,
                headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
                body: JSON.stringify(bankAccountBody(customerId)),
              }),
            },
          ],
        },
      },
    };
    const rows = [];
    const paced = [];
    const chosen = Object.entries(targets).filter(([call]) => calls.includes(call));
    for (const [call, byTarget] of chosen) {
      for (const [target, options] of Object.entries(byTarget)) {
        const samplePid = target === 'gateway' ? service.child.pid : undefined;
        rows.push(await measure(`${call}: ${target}`, options, { connections, duration, samplePid, processes }));
      }
    }
    for (const [call, byTarget] of chosen) {
      for (const target of ['sandbox directly', 'gateway']) {
        paced.push(await measure(`${call}: ${target}`, byTarget[target], { connections: 1, duration, processes, rate }));
      }
    }
    const memory = memoryOf(service.child.pid);
    if (sealed.length < next) log(`warning: ${next} sealed requests used, ${sealed.length} prepared: some references repeated`);
    return { rows, paced, rate, memory, connections, duration, database: database.description };
  } finally {
    for (const process of started.reverse()) await process.stop();
    await database.stop();
  }
}

export function report({ rows, paced, rate, memory, connections, duration, database }) {
  const by = Object.fromEntries(rows.map((row) => [row.name, row]));
  const lines = [];
  lines.push(`Loopback, ${connections} connections, ${duration} s per scenario after a 2 s warm-up; database: ${database}.`);
  lines.push('');
  lines.push('At saturation (each connection sends again as soon as it is answered):');
  lines.push('');
  lines.push(
    table(
      ['Scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors / non-2xx', 'requests', 'machine CPU busy'],
      rows.map((row) => [row.name, fixed(row.rps, 0), fixed(row.p50, 1), fixed(row.p99, 1), String(row.failures), String(row.total), `${fixed(100 * row.machineBusy, 0)}%`]),
    ),
  );
  lines.push('');
  const compare = (kind) => {
    const direct = by[`${kind}: sandbox directly`];
    const proxy = by[`${kind}: bare proxy`];
    const gateway = by[`${kind}: gateway`];
    return [kind, `${fixed((100 * gateway.rps) / proxy.rps, 0)}%`, `${fixed((100 * gateway.rps) / direct.rps, 0)}%`, fixed(gateway.p99 - direct.p99, 1), fixed(gateway.p99 - proxy.p99, 1)];
  };
  const calls = [...new Set(rows.map((row) => row.name.split(':')[0]))];
  lines.push(table(['Call', 'gateway / bare proxy (req/s)', 'gateway / direct (req/s)', 'p99 added vs direct, ms', 'p99 added vs proxy, ms'], calls.map(compare)));
  lines.push('');
  lines.push('CPU time per request, ms, by process (from /proc; machine = all of it, anything else running included):');
  lines.push('');
  const parts = Object.keys(rows[0].cpuMsPerRequest);
  lines.push(table(['Scenario', ...parts], rows.map((row) => [row.name, ...parts.map((part) => fixed(row.cpuMsPerRequest[part], 2))])));
  lines.push('');
  for (const row of rows.filter((one) => one.kernelShare !== undefined)) {
    lines.push(`- ${row.name}: ${fixed(100 * row.kernelShare, 0)}% of the gateway's CPU time is in the kernel (its sockets and log writes).`);
  }
  lines.push('');
  lines.push(
    `One request at a time, at most ${rate} per second: the latency the gateway itself adds, without queueing. ` +
      `(At saturation, as above, latency is mostly the wait behind the other connections' requests.)`,
  );
  lines.push('');
  const pacedBy = Object.fromEntries(paced.map((row) => [row.name, row]));
  lines.push(
    table(
      ['Call', 'direct p50 / p99 ms', 'gateway p50 / p99 ms', 'added p50 ms', 'added p99 ms', 'gateway req/s', 'errors / non-2xx'],
      calls.map((kind) => {
        const direct = pacedBy[`${kind}: sandbox directly`];
        const gateway = pacedBy[`${kind}: gateway`];
        return [
          kind,
          `${fixed(direct.p50, 1)} / ${fixed(direct.p99, 1)}`,
          `${fixed(gateway.p50, 1)} / ${fixed(gateway.p99, 1)}`,
          fixed(gateway.p50 - direct.p50, 1),
          fixed(gateway.p99 - direct.p99, 1),
          fixed(gateway.rps, 0),
          String(gateway.failures + direct.failures),
        ];
      }),
    ),
  );
  lines.push('');
  lines.push(`Gateway resident memory: peak ${fixed(memory.peakRssMiB, 0)} MiB (VmHWM), ${fixed(memory.rssMiB, 0)} MiB at the end.`);
  return lines.join('\n');
}
