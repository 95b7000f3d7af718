// Throughput and latency on loopback: the same two calls straight to the sandbox, through a bare
// Fastify + undici proxy, and through the gateway (auth, validation, tenancy, idempotency, audit,
// signing, encryption). Every server runs in a process of its own; autocannon runs here.
import { createHash, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'undici';
import {
  answers,
  benchDatabase,
  cpuReading,
  cpuSecondsBetween,
  devDist,
  dist,
  fixed,
  freePort,
  machineCpu,
  median,
  memoryOf,
  percentile,
  userAndSystemSecondsOf,
  postmasterOf,
  ROOT,
  scratchDir,
  startNode,
  table,
} from './support.mjs';

export const SANDBOX_TOKEN = 'sbx_bench_token_0123456789abcdef';

function expiryInTwoYears() {
  const today = new Date();
  return new Date(Date.UTC(today.getUTCFullYear() + 2, today.getUTCMonth(), 1)).toISOString().slice(0, 10);
}

/**
 * A partner's two calls on a gateway at `url`, for the token given: a customer is created first,
 * and the calls are its balance read and a bank account for it (a new reference each request).
 */
export async function partnerRequests(url, token) {
  const answer = await fetch(`${url}/api/v1/customers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
      phone_number: '+447700900123',
      date_of_birth: '1990-12-10',
      country: 'GB',
    }),
  });
  const customerId = (await answer.json()).data.customer_id;
  const balance = { method: 'GET', path: `/api/v1/customers/${customerId}/balance`, headers: { authorization: `Bearer ${token}` } };
  const bankAccount = {
    method: 'POST',
    path: '/api/v1/bank-accounts',
    setupRequest: (request) => ({
      ...request,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(bankAccountBody(customerId)),
    }),
  };
  return { customerId, balance, bankAccount };
}

export function bankAccountBody(customerId) {
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

function runOne(options) {
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
 * Several servers at once (replicas of one service): the connections are shared out between them,
 * each gets its own load generator, and the results are added up (latency: the slowest's).
 */
async function runSpread(targets, options) {
  const share = Math.max(1, Math.floor(options.connections / targets.length));
  const results = await Promise.all(targets.map((target) => runOne({ ...target, ...options, connections: share })));
  const sum = (pick) => results.reduce((total, result) => total + pick(result), 0);
  return {
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    non2xx: sum((r) => r.non2xx),
    requests: { average: sum((r) => r.requests.average), total: sum((r) => r.requests.total) },
    latency: { p50: Math.max(...results.map((r) => r.latency.p50)), p99: Math.max(...results.map((r) => r.latency.p99)) },
  };
}

/** Seconds of load before each scenario's measured run. */
export const WARM_UP_S = 2;
/**
 * Seconds of load before a server's first scenario in a throughput run: a freshly started
 * gateway spends its first seconds of load compiling and growing its heap (its CPU per read fell
 * by a fifth to a third from the first 5 s after a 2 s warm-up to the next 5 s), and a service is
 * measured as it runs for hours, not as it starts. At most a warm-up and a scenario's length more
 * (a short run, CI's smoke run, is not about its figures).
 */
export const FIRST_WARM_UP_S = 8;
export const firstWarmUp = (duration) => Math.min(FIRST_WARM_UP_S, WARM_UP_S + duration);

/**
 * One scenario: a warm-up (`warmUp` seconds), then the measured run. Each connection sends its
 * next request as soon as the last is answered; with `rate`, no faster than that many requests per
 * second in all. `options` may be a list: replicas of one service, loaded together (runSpread).
 */
export async function measure(name, options, { connections, duration, samplePid, processes = {}, rate, warmUp = WARM_UP_S }) {
  const paced = rate ? { overallRate: rate } : {};
  const run = Array.isArray(options) ? (settings) => runSpread(options, settings) : (settings) => runOne({ ...options, ...settings });
  await run({ ...paced, connections, duration: warmUp });
  let peak = 0;
  const sampler = samplePid ? setInterval(() => (peak = Math.max(peak, memoryOf(samplePid).rssMiB)), 100) : undefined;
  const kernelBefore = samplePid ? userAndSystemSecondsOf(samplePid) : undefined;
  const before = cpuNow(processes);
  const wallBefore = process.hrtime.bigint();
  const result = await run({ ...paced, connections, duration });
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

/**
 * Waits until the processes that take part have gone quiet: together under QUIET_CPU of one core
 * over a second. The loads at saturation leave work behind them (the audit log's sealing of every
 * event they wrote, PostgreSQL's writes), and one request at a time measured meanwhile would wait
 * behind it. Resolves to the seconds waited, or to undefined when they did not go quiet in time.
 */
const QUIET_CPU = 0.05;
async function untilQuiet(processes, { timeoutS = 120 } = {}) {
  const started = Date.now();
  while (Date.now() - started < timeoutS * 1000) {
    const before = Object.values(processes).map(({ pid, tree }) => cpuReading(pid, { tree }));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = Object.values(processes).map(({ pid, tree }) => cpuReading(pid, { tree }));
    const busy = after.reduce((sum, reading, index) => sum + cpuSecondsBetween(before[index], reading), 0);
    if (busy < QUIET_CPU) return (Date.now() - started) / 1000;
  }
  return undefined;
}

/**
 * One request at a time, at most `rate` per second, for `duration` seconds, timed here to the
 * microsecond (autocannon reports whole milliseconds): the latency a server adds, without queueing.
 */
async function oneAtATime(name, { url, requests: [template] }, { duration, rate, pid }) {
  const client = new Client(url, { keepAliveTimeout: 30_000, pipelining: 1 });
  const send = async () => {
    const one = template.setupRequest ? template.setupRequest({ ...template }) : template;
    const answer = await client.request({ method: one.method, path: one.path, headers: one.headers, body: one.body });
    await answer.body.dump();
    return answer.statusCode;
  };
  try {
    const warmUntil = Date.now() + 2000;
    while (Date.now() < warmUntil) await send();
    const latencies = [];
    let failures = 0;
    const gapMs = 1000 / rate;
    // What the server spends with no request at all (its timers, its background work), per second of the same length.
    let idleMsPerSecond;
    if (pid !== undefined) {
      const idleFrom = cpuReading(pid);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      idleMsPerSecond = (1000 * cpuSecondsBetween(idleFrom, cpuReading(pid))) / 2;
      await send(); // the first after the pause is not counted
    }
    const cpuBefore = pid === undefined ? undefined : cpuReading(pid);
    const started = process.hrtime.bigint();
    const until = Date.now() + duration * 1000;
    while (Date.now() < until) {
      const before = process.hrtime.bigint();
      const status = await send();
      const ms = Number(process.hrtime.bigint() - before) / 1e6;
      latencies.push(ms);
      if (status >= 300) failures++;
      if (ms < gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs - ms));
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    // The server's own CPU per request, one at a time: what its code costs when nothing is shared or batched.
    const cpuMs = cpuBefore === undefined ? undefined : (1000 * cpuSecondsBetween(cpuBefore, cpuReading(pid))) / latencies.length;
    latencies.sort((a, b) => a - b);
    return {
      name,
      rps: latencies.length / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      failures,
      total: latencies.length,
      cpuMs,
      idleCpuMs: idleMsPerSecond === undefined ? undefined : (idleMsPerSecond * seconds) / latencies.length,
    };
  } finally {
    await client.close();
  }
}

/** What a request straight to the bench sandbox needs: its token, and the gateway's own cipher and signer for its key. */
export function providerSide(dataDir) {
  const { readUpstreamPublicKey } = dist('config/upstream-public-key.js');
  const { JwePayloadCipher } = dist('upstream/payload-cipher.js');
  const { RequestSigner } = dist('upstream/request-signer.js');
  const key = readUpstreamPublicKey(readFileSync(join(dataDir, 'sandbox', 'public.pem'), 'utf8'));
  return {
    cipher: new JwePayloadCipher(key.key),
    signer: new RequestSigner(key.pem),
    providerAuth: { authorization: `Bearer ${SANDBOX_TOKEN}`, accept: 'application/json' },
  };
}

/** The sandbox's path of a customer's balance, as the gateway calls it. */
export const providerBalancePath = (customerId) => `/api/v1/customer/balance/${customerId}`;

/**
 * The sandbox provider in a process of its own, its key pair kept under `dataDir`. Ready once its
 * public key is served (an endpoint of its documented API, not a line of its output).
 */
export async function startBenchSandbox(dataDir) {
  const port = await freePort();
  const sandboxUrl = `http://127.0.0.1:${port}`;
  const sandbox = await startNode(
    ['dist/dev/sandbox/main.js'],
    { DATA_DIR: dataDir, SANDBOX_PORT: String(port), SANDBOX_BEARER_TOKEN: SANDBOX_TOKEN, LOG_LEVEL: 'warn' },
    answers(`${sandboxUrl}/__sandbox/public-key`),
  );
  return { sandbox, sandboxUrl };
}

/**
 * The keys production requires, as files under `dataDir` (made once): gateways sharing `dataDir`
 * share them, as replicas share a Secret.
 */
function sharedKeys(dataDir) {
  mkdirSync(dataDir, { recursive: true });
  const audit = join(dataDir, 'audit-signing-key.pem');
  const pseudonym = join(dataDir, 'end-user-pseudonym.key');
  try {
    writeFileSync(audit, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
  }
  const data = join(dataDir, 'data.key');
  for (const file of [pseudonym, data]) {
    try {
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
  }
  return { AUDIT_SIGNING_KEY: audit, END_USER_PSEUDONYM_KEY: pseudonym, DATA_KEY: data };
}

/**
 * The Node flags the production image runs the service with (the Dockerfile's last CMD, between
 * `node` and the entry point), so that the gateway is measured as it is deployed.
 */
export function productionNodeFlags(root = ROOT) {
  const cmd = readFileSync(join(root, 'Dockerfile'), 'utf8')
    .match(/^CMD \[(.*)\]\s*$/gm)
    ?.at(-1);
  const words = cmd ? JSON.parse(cmd.slice('CMD '.length)) : [];
  return words.slice(1, -1).filter((word) => word.startsWith('--'));
}

/** The production image's allocator settings: the Dockerfile's ENV of these names in its last stage. */
const ALLOCATOR_SETTINGS = ['LD_PRELOAD', 'MALLOC_CONF'];

/**
 * The allocator the production image runs the service with (jemalloc: the Dockerfile's `ENV
 * LD_PRELOAD=… MALLOC_CONF=…`), so that the gateway's memory is measured as it is deployed. A
 * machine without Debian's libjemalloc2 runs it on glibc's malloc: `allocatorOf` says which.
 */
export function productionAllocatorEnv(root = ROOT) {
  const stages = readFileSync(join(root, 'Dockerfile'), 'utf8')
    .replace(/\\\n/g, ' ')
    .split(/^FROM /m);
  const env = {};
  for (const [, assignments] of stages.at(-1).matchAll(/^ENV (.*)$/gm)) {
    for (const word of assignments.trim().split(/\s+/)) {
      const name = word.slice(0, word.indexOf('='));
      if (ALLOCATOR_SETTINGS.includes(name)) env[name] = word.slice(name.length + 1);
    }
  }
  const named = ALLOCATOR_SETTINGS.filter((name) => new RegExp(`\\b${name}\\b`).test(stages.at(-1).replace(/^#.*$/gm, '')));
  const unread = named.filter((name) => !(name in env));
  if (unread.length > 0) throw new Error(`Dockerfile: ${unread.join(', ')} set in a form this bench does not read (ENV NAME=value)`);
  return env;
}

/** Which allocator a running process has: jemalloc when its library is mapped, else glibc's malloc. */
export function allocatorOf(pid) {
  return readFileSync(`/proc/${pid}/maps`, 'utf8').includes('/libjemalloc.so') ? 'jemalloc' : "glibc's malloc";
}

/** A gateway process (`entry`: its worker, worker.js) in live mode against the bench sandbox, on `database`, with the rate limits out of the way. */
export async function startBenchGatewayProcess({ database, dataDir, sandboxUrl, env = {}, nodeArgs = [], root = ROOT, entry = 'main.js' }) {
  const port = await freePort();
  const allocator = productionAllocatorEnv(root);
  const gateway = await startNode(
    [...productionNodeFlags(root), ...nodeArgs, join(root, 'dist', 'src', entry)],
    {
      NODE_ENV: 'production',
      PORT: String(port),
      LOG_LEVEL: 'info',
      // Gateways sharing `dataDir` share the keys kept there.
      DATA_DIR: dataDir,
      ...sharedKeys(dataDir),
      DATABASE_URL: database.url,
      ...(database.ownerUrl ? { MIGRATIONS_DATABASE_URL: database.ownerUrl } : {}),
      UPSTREAM_BASE_URL: sandboxUrl,
      UPSTREAM_BEARER_TOKEN: SANDBOX_TOKEN,
      UPSTREAM_PUBLIC_KEY: join(dataDir, 'sandbox', 'public.pem'),
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_PER_IP_PER_MINUTE: '1000000',
      AUDIT_PURGE_DAILY: 'false',
      // BENCH_REDIS_URL: DPoP proofs remembered in that Redis (DPOP_REPLAY_REDIS_URL) rather than PostgreSQL, in every bench.
      ...(process.env.BENCH_REDIS_URL ? { DPOP_REPLAY_REDIS_URL: process.env.BENCH_REDIS_URL } : {}),
      // Where a web app's login comes back to (browser sessions).
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ...allocator,
      ...env,
    },
    // Ready as a load balancer sees it: the readiness probe answers 200.
    answers(`http://127.0.0.1:${port}/health/ready`),
  );
  const preload = { ...allocator, ...env }.LD_PRELOAD;
  if (preload && allocatorOf(gateway.child.pid) !== 'jemalloc') {
    process.stderr.write(`[bench] warning: the gateway runs on glibc's malloc, not on ${preload} as the image does (install libjemalloc2)\n`);
  }
  return { process: gateway, pid: gateway.child.pid, port, url: `http://127.0.0.1:${port}` };
}

/** The service's URL, and the schema owner's, which creates clients (the service's role only reads them). */
export function ownerEnv(database) {
  return { DATABASE_URL: database.url, ...(database.ownerUrl ? { MIGRATIONS_DATABASE_URL: database.ownerUrl } : {}) };
}

/** A partner client made the way operators make one (npm run clients -- create); returns its token. */
export async function createPartnerClient(name, env, role = 'partner') {
  const created = await startNode(['dist/src/auth/cli/clients.cli.js', 'create', '--name', name, '--role', role], { ...env, LOG_LEVEL: 'warn' }, /"token"/);
  const line = created
    .output()
    .trim()
    .split('\n')
    .find((text) => text.includes('"token"'));
  return JSON.parse(line).token;
}

/**
 * A gateway process (startBenchGatewayProcess) with a partner client and one customer made:
 * `targets` are its balance read and its account opening, for autocannon.
 */
export async function startBenchGateway(options) {
  const { process: gateway, port, url } = await startBenchGatewayProcess(options);
  const { database, dataDir } = options;
  const token = await createPartnerClient(`bench-${port}`, { ...ownerEnv(database), DATA_DIR: dataDir });
  const { customerId, balance, bankAccount } = await partnerRequests(url, token);
  return {
    process: gateway,
    pid: gateway.child.pid,
    url,
    token,
    customerId,
    targets: { balance: { url, requests: [balance] }, 'bank account': { url, requests: [bankAccount] }, mixed: { url, requests: [balance, bankAccount] } },
  };
}

export const END_USER_AUDIENCE = 'urn:partner-gateway';
/**
 * The development OpenID providers' access tokens live as long as the gateway accepts (its
 * OIDC_MAX_TOKEN_LIFETIME_SECONDS default): the end users' and the staff member's tokens are made
 * once, and a whole run outlasts the providers' ten minutes.
 */
export const TOKEN_SECONDS = 3600;
const STAFF_AUDIENCE = 'urn:partner-gateway:staff';
/** DPoP proofs are made ahead for at most this many requests per second (each is used once). */
export const MOST_REQUESTS_PER_SECOND = 8000;

/**
 * Two end users logged in at the development OpenID provider as a native app logs in: demo with a
 * bearer access token, alex with one bound to an ES256 key (DPoP, RFC 9449). Each creates a
 * customer of their own; the requests read its balance. DPoP proofs, one per request, are signed
 * ahead of each scenario (`prepareProofs`), so that the load generator only sends.
 */
export async function endUserCallers(issuer, serviceUrl) {
  const { devLogin } = devDist('identity-provider/dev-login.js');
  const { SignJWT, generateKeyPair, exportJWK } = await import('jose');
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  const proof = (htm, htu, extra = {}) =>
    new SignJWT({ htm, htu, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ...extra })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .sign(privateKey);
  const bearer = (await devLogin({ issuer, user: 'demo', audience: END_USER_AUDIENCE })).access_token;
  const bound = (await devLogin({ issuer, user: 'alex', audience: END_USER_AUDIENCE, dpop: (method, url) => proof(method, url) })).access_token;
  const ath = createHash('sha256').update(bound).digest('base64url');
  const customerBody = JSON.stringify({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone_number: '+447700900123' });
  const created = async (headers) =>
    (
      await (
        await fetch(`${serviceUrl}/api/v1/customers`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: customerBody })
      ).json()
    ).data.customer_id;
  const bearerCustomer = await created({ authorization: `Bearer ${bearer}` });
  const boundCustomer = await created({ authorization: `DPoP ${bound}`, dpop: await proof('POST', `${serviceUrl}/api/v1/customers`, { ath }) });
  const boundPath = `/api/v1/customers/${boundCustomer}/balance`;
  let proofs = [];
  let used = 0;
  return {
    bearerBalance: { method: 'GET', path: `/api/v1/customers/${bearerCustomer}/balance`, headers: { authorization: `Bearer ${bearer}` } },
    dpopBalance: {
      method: 'GET',
      path: boundPath,
      setupRequest: (request) => ({ ...request, headers: { authorization: `DPoP ${bound}`, dpop: proofs[used++ % proofs.length] } }),
    },
    prepareProofs: async (count) => {
      used = 0;
      proofs = [];
      for (let i = 0; i < count; i++) proofs.push(await proof('GET', `${serviceUrl}${boundPath}`, { ath }));
    },
    proofsMade: () => proofs.length,
    proofsUsed: () => used,
  };
}

/** Node flags for the gateway, from BENCH_GATEWAY_NODE_FLAGS (to try V8 settings, say). */
const gatewayNodeFlags = () => (process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(' ').filter(Boolean);

const availableCpus = () => (typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);

export async function throughput({
  connections = 50,
  duration = 10,
  rate = 200,
  profile = false,
  allocations = false,
  calls = ['balance', 'audit search', 'bank account'],
  replicas = 2,
  rounds = 3,
} = {}) {
  const log = (message) => process.stderr.write(`[bench] ${message}\n`);
  const dataDir = scratchDir('pgw-bench-run-');
  const database = await benchDatabase(log);
  log(`database: ${database.description}`);
  const started = [];
  try {
    const { sandbox, sandboxUrl } = await startBenchSandbox(dataDir);
    started.push(sandbox);

    const profileDir = join(ROOT, 'bench', 'profiles');
    const gatewayEnv = {};
    const startGateway = async (withProfile) => {
      const nodeArgs = [
        ...(withProfile && profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
        ...(withProfile && allocations ? ['--require', join(ROOT, 'bench', 'allocation-sampler.cjs')] : []),
        ...gatewayNodeFlags(),
      ];
      const env = withProfile && allocations ? { ...gatewayEnv, BENCH_ALLOCATION_DIR: profileDir } : gatewayEnv;
      const { process: gateway, url } = await startBenchGatewayProcess({ database, dataDir, sandboxUrl, nodeArgs, env });
      started.push(gateway);
      return { gateway, url };
    };
    // The partner's OpenID provider (the development one, in this process): end users' tokens.
    const { startDevIdentityProvider } = devDist('identity-provider/dev-identity-provider.js');
    const identityProvider = await startDevIdentityProvider({ port: 0, audience: END_USER_AUDIENCE, accessTokenSeconds: TOKEN_SECONDS });
    started.push({ stop: () => identityProvider.close() });
    gatewayEnv.OIDC_ISSUER = identityProvider.issuer;
    // The company's provider (the development staff one): staff tokens, for the audit search.
    const staffProvider = await startDevIdentityProvider({ port: 0, audience: STAFF_AUDIENCE, staff: true, accessTokenSeconds: TOKEN_SECONDS });
    started.push({ stop: () => staffProvider.close() });
    gatewayEnv.STAFF_OIDC_ISSUER = staffProvider.issuer;
    // Web apps' browser sessions: the gateway is the development provider's partner-web client.
    Object.assign(gatewayEnv, { OIDC_CLIENT_ID: 'partner-web', OIDC_CLIENT_SECRET: 'partner-web-secret', SESSION_KEY: randomBytes(32).toString('base64') });
    const { gateway: service, url: serviceUrl } = await startGateway(profile || allocations);
    await identityProvider.setWebOrigins([serviceUrl]);
    // A second replica, for how throughput grows from one to two (the service is stateless).
    const second = replicas >= 2 ? await startGateway(false) : undefined;
    // The same gateway with traces on, every request sampled, exported over OTLP/HTTP (JSON) to a
    // sink that drops them: what tracing costs at full sampling.
    const sinkPort = await freePort();
    const sink = await startNode(['bench/otlp-sink.mjs'], { PORT: String(sinkPort) }, /otlp sink listening/);
    started.push(sink);
    const { process: tracedGateway, url: tracedUrl } = await startBenchGatewayProcess({
      database,
      dataDir,
      sandboxUrl,
      nodeArgs: gatewayNodeFlags(),
      env: {
        ...gatewayEnv,
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'always_on',
      },
    });
    started.push(tracedGateway);

    const proxyPort = await freePort();
    const proxy = await startNode(['bench/bare-proxy.mjs'], { TARGET: sandboxUrl, PORT: String(proxyPort) }, /bare proxy listening/);
    started.push(proxy);
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;

    // The yardsticks: NestJS itself, and NestJS doing the gateway's durable work the obvious way.
    const yardstickEnv = {
      UPSTREAM_BASE_URL: sandboxUrl,
      UPSTREAM_BEARER_TOKEN: SANDBOX_TOKEN,
      UPSTREAM_PUBLIC_KEY: join(dataDir, 'sandbox', 'public.pem'),
      DATABASE_URL: database.url,
    };
    const passthroughPort = await freePort();
    const passthrough = await startNode(['bench/nest-yardsticks.mjs'], { ...yardstickEnv, MODE: 'passthrough', PORT: String(passthroughPort) }, /listening/);
    started.push(passthrough);
    const passthroughUrl = `http://127.0.0.1:${passthroughPort}`;
    const naivePort = await freePort();
    const naive = await startNode(['bench/nest-yardsticks.mjs'], { ...yardstickEnv, MODE: 'naive', PORT: String(naivePort) }, /listening/);
    started.push(naive);
    const naiveUrl = `http://127.0.0.1:${naivePort}`;

    // A partner client, and one customer of its, created the way partners do.
    const token = await createPartnerClient('bench', ownerEnv(database));
    const { customerId, balance: partnerBalance, bankAccount: partnerBankAccount } = await partnerRequests(serviceUrl, token);

    // End users: demo with a bearer access token, alex with one bound to a DPoP key; each reads a customer of their own.
    const endUsers = await endUserCallers(identityProvider.issuer, serviceUrl);
    // demo again, in a web app: logged in through the gateway's browser session, reading the same customer with the cookie.
    const { webLogin, devLogin } = devDist('identity-provider/dev-login.js');
    const { session } = await webLogin(serviceUrl, 'demo');
    const sessionBalance = { ...endUsers.bearerBalance, headers: { cookie: `__Host-gw_session=${session}`, 'x-csrf': '1' } };
    // Support's look-up of one audit event (a primary-key read: what the token costs is not lost in the query), by an admin
    // client token and by a staff member (sam, support, with a second factor).
    const adminToken = await createPartnerClient('bench-admin', ownerEnv(database), 'admin');
    const staffToken = (
      await devLogin({ issuer: staffProvider.issuer, user: 'sam', audience: STAFF_AUDIENCE, scopes: ['gateway:staff'], clientId: 'staff-console' })
    ).access_token;
    const anEvent = await (await fetch(`${serviceUrl}/api/v1/audit-events?limit=1`, { headers: { authorization: `Bearer ${adminToken}` } })).json();
    const auditSearch = (authorization) => ({
      method: 'GET',
      path: `/api/v1/audit-events/${anEvent.data.events[0].id}?reason=BENCH-1`,
      headers: { authorization },
    });

    // Provider-side requests, sealed and signed ahead of time so the load generator only sends.
    const { cipher, signer, providerAuth } = providerSide(dataDir);

    // Enough for every sealed scenario at this machine's speed, each with a fresh reference: the sandbox and
    // the bare proxy at saturation, and one at a time (each `rate` a second, after 2 s back to back).
    const sealedCount = Math.ceil((duration + firstWarmUp(duration)) * 2 * 5000 + 2 * (duration * rate + 2 * 2000)) + 5_000;
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
      ...(second ? { 'gateway 2': { pid: second.gateway.child.pid } } : {}),
      'gateway, traced': { pid: tracedGateway.child.pid },
      'OTLP sink': { pid: sink.child.pid },
      'NestJS pass-through': { pid: passthrough.child.pid },
      'naive NestJS app': { pid: naive.child.pid },
      ...(postmaster ? { PostgreSQL: { pid: postmaster, tree: true } } : {}),
    };
    const balancePath = providerBalancePath(customerId);
    const targets = {
      balance: {
        'sandbox directly': { url: sandboxUrl, requests: [{ method: 'GET', path: balancePath, headers: providerAuth }] },
        'bare proxy': { url: proxyUrl, requests: [{ method: 'GET', path: balancePath, headers: providerAuth }] },
        'NestJS pass-through': { url: passthroughUrl, requests: [partnerBalance] },
        'naive NestJS app': { url: naiveUrl, requests: [partnerBalance] },
        gateway: { url: serviceUrl, requests: [partnerBalance] },
        'gateway, end-user JWT': { url: serviceUrl, requests: [endUsers.bearerBalance] },
        'gateway, end-user DPoP': { url: serviceUrl, requests: [endUsers.dpopBalance], prepare: endUsers.prepareProofs },
        'gateway, browser session': { url: serviceUrl, requests: [sessionBalance] },
        'gateway, traced (all sampled)': { url: tracedUrl, requests: [partnerBalance], pid: tracedGateway.child.pid },
        ...(second
          ? {
              '2 gateways': [
                { url: serviceUrl, requests: [partnerBalance] },
                { url: second.url, requests: [partnerBalance] },
              ],
            }
          : {}),
      },
      // What staff do: no provider call, a page of the audit log; the two credentials on the same work.
      'audit search': {
        'gateway, admin token': { url: serviceUrl, requests: [auditSearch(`Bearer ${adminToken}`)] },
        'gateway, staff JWT': { url: serviceUrl, requests: [auditSearch(`Bearer ${staffToken}`)] },
      },
      'bank account': {
        'sandbox directly': { url: sandboxUrl, requests: [sealedRequest('/payments/banks/account')] },
        'bare proxy': { url: proxyUrl, requests: [sealedRequest('/payments/banks/account')] },
        'NestJS pass-through': { url: passthroughUrl, requests: [partnerBankAccount] },
        'naive NestJS app': { url: naiveUrl, requests: [partnerBankAccount] },
        gateway: { url: serviceUrl, requests: [partnerBankAccount] },
        'gateway, traced (all sampled)': { url: tracedUrl, requests: [partnerBankAccount], pid: tracedGateway.child.pid },
        ...(second
          ? {
              '2 gateways': [
                { url: serviceUrl, requests: [partnerBankAccount] },
                { url: second.url, requests: [partnerBankAccount] },
              ],
            }
          : {}),
      },
    };
    const rows = [];
    const paced = [];
    const chosen = Object.entries(targets).filter(([call]) => calls.includes(call));
    // The servers already loaded: each one's first scenario is warmed up longer (FIRST_WARM_UP_S).
    const warmed = new Set();
    for (const [call, byTarget] of chosen) {
      for (const [target, options] of Object.entries(byTarget)) {
        const samplePid = options.pid ?? (target.startsWith('gateway') ? service.child.pid : undefined);
        const urls = (Array.isArray(options) ? options : [options]).map((one) => one.url);
        const warmUp = urls.every((url) => warmed.has(url)) ? WARM_UP_S : firstWarmUp(duration);
        for (const url of urls) warmed.add(url);
        // Made just before the scenario: a DPoP proof is accepted for DPOP_PROOF_MAX_AGE_SECONDS only.
        if (options.prepare) await options.prepare(Math.ceil((duration + warmUp) * MOST_REQUESTS_PER_SECOND));
        rows.push(await measure(`${call}: ${target}`, options, { connections, duration, samplePid, processes, warmUp }));
        if (options.prepare && endUsers.proofsUsed() > endUsers.proofsMade()) log('warning: DPoP proofs ran out; some were replayed and refused');
      }
    }
    const quietAfter = await untilQuiet(processes);
    log(
      quietAfter === undefined
        ? 'warning: the servers did not go quiet in 120 s; one at a time measured as they were'
        : `the servers went quiet after ${fixed(quietAfter, 0)} s`,
    );
    for (const [call, byTarget] of chosen) {
      // One at a time against the provider itself: the calls that reach it.
      if (!byTarget['sandbox directly']) continue;
      // The yardsticks too: what one more hop adds (the bare proxy) and what Nest adds to it (the pass-through).
      for (const target of ['sandbox directly', 'bare proxy', 'NestJS pass-through', 'gateway']) {
        if (!byTarget[target]) continue;
        const pid = { 'bare proxy': proxy.child.pid, 'NestJS pass-through': passthrough.child.pid, gateway: service.child.pid }[target];
        paced.push(await oneAtATime(`${call}: ${target}`, byTarget[target], { duration, rate, pid }));
      }
    }
    // After one at a time, which is then measured after the same loads whether these rounds run or not:
    // the gateway's balance reads by each caller again in rounds, in a different order each round, between two loads of the
    // pass-through: each ratio is then taken within a round, so that the machine's pace, which drifts over a run, falls on both.
    const pairs = [];
    const paired = calls.includes('balance') ? PAIRED.filter((target) => targets.balance[target]) : [];
    for (let round = 0; round < rounds && paired.length > 0; round++) {
      const rotated = paired.map((_, i) => paired[(i + round) % paired.length]);
      for (const target of ['NestJS pass-through', ...rotated, 'NestJS pass-through']) {
        const options = targets.balance[target];
        if (options.prepare) await options.prepare(Math.ceil((duration + WARM_UP_S) * MOST_REQUESTS_PER_SECOND));
        const row = await measure(`balance: ${target}, round ${round + 1}`, options, { connections, duration, processes });
        const own = target === 'NestJS pass-through' ? 'NestJS pass-through' : 'gateway';
        pairs.push({ round, target, rps: row.rps, cpu: row.cpuMsPerRequest[own], failures: row.failures });
        if (options.prepare && endUsers.proofsUsed() > endUsers.proofsMade()) log('warning: DPoP proofs ran out; some were replayed and refused');
      }
    }
    const memory = { ...memoryOf(service.child.pid), allocator: allocatorOf(service.child.pid) };
    if (sealed.length < next) log(`warning: ${next} sealed requests used, ${sealed.length} prepared: some references repeated`);
    return { rows, paced, pairs, quietAfter, rate, memory, connections, duration, database: database.description };
  } finally {
    for (const process of started.reverse()) await process.stop();
    await database.stop();
  }
}

const verdict = (checks) => checks.map(([text, ok]) => `${text} ${ok ? '✓' : '✗'}`).join(', ');
const fmt = (value) => fixed(value, 2);
/**
 * What the gateway is held to, checked in the report: the request path's targets as they stand
 * since the routes run through Nest's router (docs/benchmarks.md, "The targets").
 */
const TARGETS = {
  balance: {
    saturation: (ofProxy, ofNaive) => verdict([[`≥ 1.6 × naive (${fmt(ofNaive)})`, ofNaive >= 1.6]]),
    oneAtATime: (p50, p99) => verdict([[`added p99 ≤ 5 ms`, p99 <= 5]]),
  },
  'bank account': {
    saturation: (ofProxy) => verdict([[`≥ 0.35 of proxy (${fmt(ofProxy)})`, ofProxy >= 0.35]]),
    oneAtATime: (p50) => verdict([[`added p50 ≤ 2 ms`, p50 <= 2]]),
  },
};
/** The gateway's CPU per balance read, for a partner token, an end user's JWT and a browser session, against the NestJS pass-through's. */
const MAX_CPU_OF_PASSTHROUGH = 3.0;
/** An end user's balance read against a partner token's: each caller's least throughput, and whether its CPU is held to the pass-through's too. */
const OF_PARTNER = {
  'gateway, end-user JWT': { least: 0.9, cpuHeld: true },
  'gateway, end-user DPoP': { least: 0.7, cpuHeld: false },
  'gateway, browser session': { least: 0.85, cpuHeld: true },
};
/** The gateway's balance scenarios measured again in paired rounds, each round between two loads of the pass-through. */
const PAIRED = ['gateway', ...Object.keys(OF_PARTNER)];
const MAX_PEAK_RSS_MIB = 256;

/**
 * The balance reads measured again in rounds: each gateway scenario's CPU per read against the
 * pass-through's of the same round, and each end user's throughput against the partner token's of
 * the same round; the targets judged on the medians.
 */
function pairedReport(pairs, duration) {
  const rounds = [...new Set(pairs.map((pair) => pair.round))];
  const of = (round, target) => pairs.find((pair) => pair.round === round && pair.target === target);
  /** The pass-through's CPU per read in a round: the mean of its load before the gateway's and its load after. */
  const yardstick = (round) => {
    const loads = pairs.filter((pair) => pair.round === round && pair.target === 'NestJS pass-through');
    return loads.reduce((sum, load) => sum + load.cpu, 0) / loads.length;
  };
  const each = (ratio) => rounds.map(ratio).filter(Number.isFinite);
  const shown = (values) => (values.length > 0 ? `${fixed(median(values), 2)} (${values.map((value) => fixed(value, 2)).join(', ')})` : '');
  const gateways = [...new Set(pairs.map((pair) => pair.target))].filter((target) => target !== 'NestJS pass-through');
  return [
    `The same balance reads again, ${rounds.length} rounds of ${duration} s (each after a ${WARM_UP_S} s warm-up), in a different order each round, ` +
      `each round between two loads of the pass-through (its CPU per read the mean of the two); each ratio is taken within a round, so that the ` +
      `machine's pace, which drifts over a run, falls on both. Median (each round):`,
    '',
    table(
      ['Scenario', 'gateway CPU ÷ pass-through', 'req/s ÷ partner token', 'target, on the medians'],
      gateways.map((target) => {
        const cpu = each((round) => of(round, target)?.cpu / yardstick(round));
        const ofPartner = target === 'gateway' ? [] : each((round) => of(round, target)?.rps / of(round, 'gateway')?.rps);
        const held = target === 'gateway' ? { least: undefined, cpuHeld: true } : OF_PARTNER[target];
        const checks = [
          ...(held.least === undefined ? [] : [[`≥ ${held.least} × partner token`, ofPartner.length > 0 && median(ofPartner) >= held.least]]),
          ...(held.cpuHeld ? [[`CPU ≤ ${MAX_CPU_OF_PASSTHROUGH} × pass-through`, cpu.length > 0 && median(cpu) <= MAX_CPU_OF_PASSTHROUGH]] : []),
        ];
        return [`balance: ${target === 'gateway' ? 'gateway (partner client token)' : target}`, shown(cpu), shown(ofPartner), verdict(checks)];
      }),
    ),
  ].join('\n');
}

export function report({ rows, paced, pairs = [], quietAfter, rate, memory, connections, duration, database }) {
  const by = Object.fromEntries(rows.map((row) => [row.name, row]));
  const lines = [];
  lines.push(
    `Loopback, ${connections} connections, ${duration} s per scenario after a ${WARM_UP_S} s warm-up (${firstWarmUp(duration)} s before each server's first); database: ${database}.`,
  );
  lines.push('');
  lines.push('At saturation (each connection sends again as soon as it is answered):');
  lines.push('');
  lines.push(
    table(
      ['Scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors / non-2xx', 'requests', 'machine CPU busy'],
      rows.map((row) => [
        row.name,
        fixed(row.rps, 0),
        fixed(row.p50, 1),
        fixed(row.p99, 1),
        String(row.failures),
        String(row.total),
        `${fixed(100 * row.machineBusy, 0)}%`,
      ]),
    ),
  );
  lines.push('');
  const allCalls = [...new Set(rows.map((row) => row.name.split(':')[0]))];
  // The calls that reach the provider, with their yardsticks; the audit search has its own table below.
  const calls = allCalls.filter((kind) => by[`${kind}: gateway`]);
  const ratio = (a, b) => (a && b ? a.rps / b.rps : NaN);
  lines.push('Throughput against the yardsticks of the same run (÷ bare proxy, and the gateway ÷ the naive NestJS app):');
  lines.push('');
  lines.push(
    table(
      ['Call', 'bare proxy req/s', 'NestJS pass-through', 'naive NestJS app', 'gateway', 'gateway ÷ naive app', 'target'],
      calls.map((kind) => {
        const proxy = by[`${kind}: bare proxy`];
        const gateway = by[`${kind}: gateway`];
        const naive = by[`${kind}: naive NestJS app`];
        return [
          kind,
          fixed(proxy?.rps, 0),
          fixed(ratio(by[`${kind}: NestJS pass-through`], proxy), 2),
          fixed(ratio(naive, proxy), 2),
          fixed(ratio(gateway, proxy), 2),
          fixed(ratio(gateway, naive), 2),
          TARGETS[kind]?.saturation(ratio(gateway, proxy), ratio(gateway, naive)) ?? '',
        ];
      }),
    ),
  );
  lines.push('');
  const grown = calls.filter((kind) => by[`${kind}: 2 gateways`]);
  if (grown.length > 0) {
    lines.push('Two gateway processes side by side on this machine (the connections shared between them), against one:');
    lines.push('');
    lines.push(
      table(
        ['Call', '1 gateway req/s', '2 gateways req/s', '2 ÷ 1', 'machine CPU busy with 2'],
        grown.map((kind) => {
          const one = by[`${kind}: gateway`];
          const two = by[`${kind}: 2 gateways`];
          return [kind, fixed(one.rps, 0), fixed(two.rps, 0), fixed(two.rps / one.rps, 2), `${fixed(100 * two.machineBusy, 0)}%`];
        }),
      ),
    );
    lines.push('');
  }
  const partnerRow = by['balance: gateway'];
  const passthroughCpu = by['balance: NestJS pass-through']?.cpuMsPerRequest['NestJS pass-through'];
  const endUserRows = Object.entries(OF_PARTNER)
    .map(([target, { least, cpuHeld }]) => [`balance: ${target}`, least, cpuHeld])
    .filter(([name]) => by[name]);
  if (partnerRow && endUserRows.length > 0) {
    lines.push(
      'A balance read by an end user (the OpenID provider’s access token, or a web app’s session cookie), against one with a partner client token, same run; ' +
        'and the gateway’s CPU per read against the NestJS pass-through’s:',
    );
    lines.push('');
    const ofPassthrough = (row, held) => {
      const times = row.cpuMsPerRequest.gateway / passthroughCpu;
      return [fixed(times, 2), held ? verdict([[`CPU ≤ ${MAX_CPU_OF_PASSTHROUGH} × pass-through`, times <= MAX_CPU_OF_PASSTHROUGH]]) : ''];
    };
    lines.push(
      table(
        ['Scenario', 'req/s', '÷ partner token', 'gateway CPU ms/request', 'CPU ÷ pass-through', 'target'],
        [
          [
            'balance: gateway (partner client token)',
            fixed(partnerRow.rps, 0),
            '1.00',
            fixed(partnerRow.cpuMsPerRequest.gateway, 3),
            ...ofPassthrough(partnerRow, true),
          ],
          ...endUserRows.map(([name, target, held]) => {
            const row = by[name];
            const ofPartner = row.rps / partnerRow.rps;
            const [times, cpuVerdict] = ofPassthrough(row, held);
            return [
              name,
              fixed(row.rps, 0),
              fixed(ofPartner, 2),
              fixed(row.cpuMsPerRequest.gateway, 3),
              times,
              [verdict([[`≥ ${target} × partner token`, ofPartner >= target]]), cpuVerdict].filter(Boolean).join(', '),
            ];
          }),
        ],
      ),
    );
    lines.push('');
  }
  if (pairs.length > 0) {
    lines.push(
      'The verdicts above are of single scenarios measured a minute or more apart; those of the paired rounds below judge the same targets within each round.',
      '',
    );
    lines.push(pairedReport(pairs, duration), '');
  }
  const adminSearch = by['audit search: gateway, admin token'];
  const staffSearch = by['audit search: gateway, staff JWT'];
  if (adminSearch && staffSearch) {
    const endUser = by['balance: gateway, end-user JWT'];
    const partner = by['balance: gateway'];
    const staffAdded = staffSearch.cpuMsPerRequest.gateway - adminSearch.cpuMsPerRequest.gateway;
    const endUserAdded = endUser && partner ? endUser.cpuMsPerRequest.gateway - partner.cpuMsPerRequest.gateway : NaN;
    lines.push(
      'A staff member’s token against an admin client token on the same audit search, and what an end user’s token adds to a partner’s on a balance read, same run ' +
        '(the CPU a token costs the gateway beyond a client token’s):',
    );
    lines.push('');
    lines.push(
      table(
        ['Scenario', 'req/s', '÷ client token', 'gateway CPU ms/request', 'added by the JWT, ms', 'target'],
        [
          ['audit search: gateway, admin token', fixed(adminSearch.rps, 0), '1.00', fixed(adminSearch.cpuMsPerRequest.gateway, 3), '', ''],
          [
            'audit search: gateway, staff JWT',
            fixed(staffSearch.rps, 0),
            fixed(staffSearch.rps / adminSearch.rps, 2),
            fixed(staffSearch.cpuMsPerRequest.gateway, 3),
            fixed(staffAdded, 3),
            Number.isNaN(endUserAdded) ? '' : verdict([[`added ≤ an end user's (${fixed(endUserAdded, 3)} ms)`, staffAdded <= endUserAdded]]),
          ],
          ...(endUser && partner
            ? [
                [
                  'balance: gateway, end-user JWT (÷ partner token)',
                  fixed(endUser.rps, 0),
                  fixed(endUser.rps / partner.rps, 2),
                  fixed(endUser.cpuMsPerRequest.gateway, 3),
                  fixed(endUserAdded, 3),
                  '',
                ],
              ]
            : []),
        ],
      ),
    );
    lines.push('');
  }
  const tracedCalls = calls.filter((call) => by[`${call}: gateway`] && by[`${call}: gateway, traced (all sampled)`]);
  if (tracedCalls.length > 0) {
    lines.push(
      'Traces on, every request sampled and exported over OTLP/HTTP (a second gateway process, measured the same way), against the gateway untraced, same run:',
    );
    lines.push('');
    lines.push(
      table(
        ['Call', 'req/s untraced', 'req/s traced', 'traced ÷ untraced', 'gateway CPU ms/request untraced', 'traced'],
        tracedCalls.map((call) => {
          const plain = by[`${call}: gateway`];
          const traced = by[`${call}: gateway, traced (all sampled)`];
          return [
            call,
            fixed(plain.rps, 0),
            fixed(traced.rps, 0),
            fixed(traced.rps / plain.rps, 2),
            fixed(plain.cpuMsPerRequest.gateway, 3),
            fixed(traced.cpuMsPerRequest['gateway, traced'], 3),
          ];
        }),
      ),
    );
    lines.push('');
  }
  lines.push('CPU time per request, ms, by process (from /proc; machine = all of it, anything else running included):');
  lines.push('');
  const parts = Object.keys(rows[0].cpuMsPerRequest);
  lines.push(
    table(
      ['Scenario', ...parts],
      rows.map((row) => [row.name, ...parts.map((part) => fixed(row.cpuMsPerRequest[part], 2))]),
    ),
  );
  lines.push('');
  for (const row of rows.filter((one) => one.kernelShare !== undefined)) {
    lines.push(`- ${row.name}: ${fixed(100 * row.kernelShare, 0)}% of the gateway's CPU time is in the kernel (its sockets and log writes).`);
  }
  lines.push('');
  lines.push(
    `One request at a time, at most ${rate} per second: the latency the gateway itself adds, without queueing. ` +
      `(At saturation, as above, latency is mostly the wait behind the other connections' requests.) ` +
      (quietAfter === undefined
        ? 'The servers had not gone quiet after the loads at saturation (120 s): these were measured as they were.'
        : `Measured once the servers had gone quiet after the loads at saturation (${fixed(quietAfter, 0)} s); idle CPU over the 2 s before each, in /proc's 10 ms ticks.`),
  );
  lines.push('');
  const pacedBy = Object.fromEntries(paced.map((row) => [row.name, row]));
  lines.push(
    table(
      [
        'Call',
        'direct p50 / p99 ms',
        'gateway p50 / p99 ms',
        'added p50 ms',
        'added p99 ms',
        'added p50 by the bare proxy / the pass-through, ms',
        'CPU ms per request: gateway / pass-through (of it, what they spend idle)',
        'gateway req/s',
        'errors / non-2xx',
        'target',
      ],
      calls.map((kind) => {
        const direct = pacedBy[`${kind}: sandbox directly`];
        const gateway = pacedBy[`${kind}: gateway`];
        const yardsticks = [pacedBy[`${kind}: bare proxy`], pacedBy[`${kind}: NestJS pass-through`]];
        return [
          kind,
          `${fixed(direct.p50, 2)} / ${fixed(direct.p99, 2)}`,
          `${fixed(gateway.p50, 2)} / ${fixed(gateway.p99, 2)}`,
          fixed(gateway.p50 - direct.p50, 2),
          fixed(gateway.p99 - direct.p99, 2),
          yardsticks.map((row) => (row ? fixed(row.p50 - direct.p50, 2) : '–')).join(' / '),
          `${fixed(gateway.cpuMs, 3)} (${fixed(gateway.idleCpuMs, 3)}) / ${fixed(yardsticks[1]?.cpuMs, 3)} (${fixed(yardsticks[1]?.idleCpuMs, 3)})`,
          fixed(gateway.rps, 0),
          String([direct, gateway, ...yardsticks].reduce((sum, row) => sum + (row?.failures ?? 0), 0)),
          TARGETS[kind]?.oneAtATime(gateway.p50 - direct.p50, gateway.p99 - direct.p99) ?? '',
        ];
      }),
    ),
  );
  lines.push('');
  const failures = [...rows, ...paced, ...pairs].reduce((sum, row) => sum + row.failures, 0);
  lines.push(`Errors and non-2xx answers in all scenarios: ${failures} (target: 0 — ${failures === 0 ? 'met' : 'NOT met'}).`);
  lines.push('');
  lines.push(
    `Gateway resident memory (allocator: ${memory.allocator}): peak ${fixed(memory.peakRssMiB, 0)} MiB (VmHWM), ${fixed(memory.rssMiB, 0)} MiB at the end ` +
      `(target: peak ≤ ${MAX_PEAK_RSS_MIB} MiB — ${memory.peakRssMiB <= MAX_PEAK_RSS_MIB ? 'met' : 'NOT met'}).`,
  );
  // Where it grew: the resident memory's highest 100 ms sample in each scenario's measured part (the traced gateway's is its own process's).
  const sampled = rows.filter((row) => row.peakRssMiB !== undefined);
  if (sampled.length > 0) lines.push(`Its highest sample, MiB, by scenario: ${sampled.map((row) => `${row.name} ${fixed(row.peakRssMiB, 0)}`).join('; ')}.`);
  return lines.join('\n');
}
