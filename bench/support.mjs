// What every benchmark needs: the built service's modules, processes, a database, a table.
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdtempSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
export const ROOT = join(import.meta.dirname, '..');
/** The compiled service (npm run bench builds it first). */
export const dist = (path) => require(join(ROOT, 'dist', 'src', path));
/** The compiled development tooling (dev/): the development OpenID provider and its login, the embedded PostgreSQL. */
export const devDist = (path) => require(join(ROOT, 'dist', 'dev', path));

export function scratchDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755); // the embedded PostgreSQL may run as the postgres user
  return dir;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * A node process writing to a log file (not a pipe: a load generator busy in this process must not
 * slow a server down by reading its logs late). Resolves once `ready` (a pattern) appears in that
 * file, or once `ready` (a function) resolves true.
 */
export async function startNode(args, env, ready, { timeoutMs = 60_000 } = {}) {
  const logFile = join(scratchDir('pgw-bench-log-'), 'output.log');
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const output = () => readFileSync(logFile, 'utf8');
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  const isReady = typeof ready === 'function' ? ready : async () => ready.test(output());
  while (!(await isReady())) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited ${child.exitCode}:\n${output().slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`${args.join(' ')} did not start:\n${output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    output,
    logFile,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Peak and current resident memory of a process, from /proc (Linux). */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakRssMiB: kib('VmHWM') / 1024 };
}

/**
 * A PostgreSQL for the benchmark: BENCH_DATABASE_URL when set (a scratch database is created in it
 * and dropped afterwards; one role), else an embedded one in a scratch directory, where the service
 * connects as its own role (`url`) and the superuser owns the schema (`ownerUrl`), as in production.
 */
export async function benchDatabase(log) {
  const { Client } = require('pg');
  const external = process.env.BENCH_DATABASE_URL;
  if (external) {
    const name = `pgw_bench_${process.pid}`;
    const admin = new Client({ connectionString: external });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(external);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      description: `${describe(url)} (external)`,
      async stop() {
        const again = new Client({ connectionString: external });
        await again.connect();
        await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await again.end();
      },
    };
  }
  // Without BENCH_DATABASE_URL, the embedded PostgreSQL, offered by development tooling as for npm start.
  devDist('local-database.js');
  const { resolveDatabase } = dist('database/database-handle.js');
  const { validateEnvironment } = dist('config/load-config.js');
  const dataDir = scratchDir('pgw-bench-');
  const handle = await resolveDatabase(validateEnvironment({ DATA_DIR: dataDir }), { info: log, warn: log, debug: () => undefined });
  return { url: handle.url, ownerUrl: handle.ownerUrl, description: handle.description, stop: () => handle.stop(), dataDir };
}

/** Another database on the same server as `database` (its owner creates it; the gateway's migrations grant the service's role). */
export async function siblingDatabase(database, name) {
  const { Client } = require('pg');
  const adminUrl = new URL(database.ownerUrl ?? database.url);
  adminUrl.pathname = '/postgres';
  const admin = new Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const on = (url) => {
    const parsed = new URL(url);
    parsed.pathname = `/${name}`;
    return parsed.toString();
  };
  return { url: on(database.url), ownerUrl: database.ownerUrl && on(database.ownerUrl) };
}

function describe(url) {
  return `${url.hostname}:${url.port || 5432}${url.pathname}`;
}

/** `work` run `count` times one after another (given its index): its p50, p99 and mean, in ms. */
export async function timed(count, work) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await work(i);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), mean: times.reduce((a, b) => a + b, 0) / times.length };
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Prints rows as a Markdown table (what docs/benchmarks.md holds). */
export function table(headers, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

export const fixed = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** Resolves true once `url` answers 200. */
export const answers = (url) => () =>
  fetch(url).then(
    (r) => r.ok,
    () => false,
  );

const TICKS_PER_SECOND = 100; // USER_HZ: what /proc reports CPU time in, on Linux

/** CPU seconds a process has used so far (user + system), or NaN once it is gone. */
function cpuSecondsOfPid(pid) {
  return userAndSystemSecondsOf(pid).reduce((a, b) => a + b, 0);
}

/** [user, system] CPU seconds of a process so far: system is time in the kernel (sockets, files). */
export function userAndSystemSecondsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return [Number(fields[11]) / TICKS_PER_SECOND, Number(fields[12]) / TICKS_PER_SECOND];
  } catch {
    return [NaN, NaN];
  }
}

function childrenOf(pid) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(pid)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * CPU seconds used so far by a process and, with `tree`, by each of its children (a PostgreSQL
 * server's backends), by pid: compare two readings with cpuSecondsBetween.
 */
export function cpuReading(pid, { tree = false } = {}) {
  const pids = tree ? [pid, ...childrenOf(pid)] : [pid];
  return new Map(pids.map((one) => [one, cpuSecondsOfPid(one)]).filter(([, seconds]) => Number.isFinite(seconds)));
}

/** CPU seconds used between two readings; a child that started in between counts from zero. */
export function cpuSecondsBetween(before, after) {
  let seconds = 0;
  for (const [pid, now] of after) seconds += now - (before.get(pid) ?? 0);
  return seconds;
}

/** Busy and total CPU seconds of the whole machine, from /proc/stat. */
export function machineCpu() {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = ticks[3] + ticks[4];
  return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}

/** The PostgreSQL server's main process, when it runs on this machine (else undefined). */
export async function postmasterOf(url) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const [{ pid }] = (await client.query('SELECT pg_backend_pid() AS pid')).rows;
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  } catch {
    return undefined;
  } finally {
    await client.end();
  }
}

/** The middle of `values`' finite numbers (the mean of the two middle ones when there is an even number); NaN when there is none. */
export function median(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
