// A soak run: one gateway under a steady load below saturation for `minutes`, one minute at a time,
// half balance reads and half account openings. Every 5 s the gateway's own /metrics is read:
// resident memory, heap in use, event-loop delay p99 (prom-client's, over the 5 s since the last
// read) and open handles. What it shows is whether they stay flat: a leak or a growing queue shows
// as a slope, which the report fits by least squares over the minutes after the first.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measure, startBenchGateway, startBenchSandbox } from './throughput.mjs';
import { benchDatabase, fixed, memoryOf, percentile, scratchDir, table } from './support.mjs';

const SAMPLE_EVERY_MS = 5_000;
const MiB = 1024 * 1024;

/** The named series of a Prometheus text exposition, without labels, as numbers. */
function readMetrics(text, names) {
  const values = {};
  for (const line of text.split('\n')) {
    const [name, value] = line.split(' ');
    if (names.includes(name)) values[name] = Number(value);
  }
  return values;
}

async function sample(gateway) {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const metrics = readMetrics(text, [
    'nodejs_heap_size_used_bytes',
    'nodejs_eventloop_lag_p99_seconds',
    'nodejs_active_handles_total',
    'nodejs_active_resources_total',
  ]);
  return {
    at: Date.now(),
    rssMiB: memoryOf(gateway.pid).rssMiB,
    heapMiB: metrics.nodejs_heap_size_used_bytes / MiB,
    eldP99Ms: metrics.nodejs_eventloop_lag_p99_seconds * 1000,
    handles: metrics.nodejs_active_handles_total,
    resources: metrics.nodejs_active_resources_total,
  };
}

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

export async function soak({ minutes = 10, rate = 150, connections = 20 } = {}) {
  const log = (message) => process.stderr.write(`[bench] ${message}\n`);
  const dataDir = scratchDir('pgw-bench-soak-');
  const database = await benchDatabase(log);
  const started = [];
  try {
    const { sandbox, sandboxUrl } = await startBenchSandbox(dataDir);
    started.push(sandbox);
    const gateway = await startBenchGateway({ database, dataDir, sandboxUrl, env: { METRICS_PUBLIC: 'true' } });
    started.push(gateway.process);
    const startedAt = Date.now();
    const samples = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push(await sample(gateway));
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
      }
    })();
    const rows = [];
    try {
      // A minute is 58 s of load after measure's 2 s warm-up; a run under a minute (CI's smoke run)
      // is one segment of what remains of it.
      const segments = Math.max(1, Math.floor(minutes));
      const loadSeconds = minutes >= 1 ? 58 : Math.max(1, Math.round(minutes * 60) - 2);
      for (let minute = 1; minute <= segments; minute++) {
        const from = Date.now();
        const row = await measure(`minute ${minute}`, gateway.targets.mixed, {
          connections,
          duration: loadSeconds,
          rate,
          processes: { gateway: { pid: gateway.pid } },
        });
        const these = samples.filter((s) => s.at >= from);
        rows.push({ minute, ...row, samples: these });
        const last = these[these.length - 1];
        log(
          `minute ${minute}: ${fixed(row.rps, 0)} req/s, p99 ${row.p99} ms, ${row.failures} failed; RSS ${fixed(last?.rssMiB)} MiB, heap ${fixed(last?.heapMiB)} MiB, handles ${last?.handles}`,
        );
      }
    } finally {
      sampling = false;
      await sampler;
    }
    const result = {
      minutes,
      rate,
      connections,
      node: process.version,
      rows,
      samples,
      seconds: (Date.now() - startedAt) / 1000,
      database: database.description,
    };
    const file = join(dataDir, 'soak.json');
    writeFileSync(file, JSON.stringify(result));
    log(`readings kept in ${file}`);
    return result;
  } finally {
    for (const process of started.reverse()) await process.stop();
    await database.stop();
  }
}

const median = (values) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

export function report({ minutes, rate, connections, node, rows, samples, seconds, database }) {
  const lines = [
    `One gateway on Node ${node}, ${minutes} minutes at ${rate} req/s (half balance reads, half account openings; ${connections} connections), ` +
      `read every ${SAMPLE_EVERY_MS / 1000} s from its /metrics and /proc; on ${database}. ${fixed(seconds, 0)} s in all.`,
    '',
  ];
  lines.push(
    table(
      ['Minute', 'req/s', 'p50 / p99 ms', 'failed', 'RSS MiB (end)', 'heap in use MiB (median)', 'event-loop delay p99 ms (median / max)', 'handles (min–max)'],
      rows.map(({ minute, rps, p50, p99, failures, samples: s }) => [
        String(minute),
        fixed(rps, 0),
        `${p50} / ${p99}`,
        String(failures),
        fixed(s[s.length - 1]?.rssMiB),
        fixed(median(s.map((x) => x.heapMiB))),
        `${fixed(median(s.map((x) => x.eldP99Ms)))} / ${fixed(Math.max(...s.map((x) => x.eldP99Ms)))}`,
        `${Math.min(...s.map((x) => x.handles))}–${Math.max(...s.map((x) => x.handles))}`,
      ]),
    ),
  );
  // Flatness over the minutes after the second: start-up, JIT warm-up and the first major
  // collections of the old generation settle in the first two.
  const settled = rows.length > 2 ? samples.filter((s) => s.at >= rows[2].samples[0]?.at) : [];
  const t0 = settled[0]?.at ?? 0;
  const perMinute = (pick) => slope(settled.map((s) => [(s.at - t0) / 60_000, pick(s)]));
  const total = rows.reduce((sum, row) => sum + row.total, 0);
  const failed = rows.reduce((sum, row) => sum + row.failures, 0);
  if (settled.length < 2) {
    lines.push('', `No fit: it starts at minute 3, and this run had ${minutes}. ${total.toLocaleString('en')} requests, ${failed} failed.`);
    return lines.join('\n');
  }
  lines.push(
    '',
    `From minute 3 to the end (${settled.length} readings): RSS ${fixed(settled[0]?.rssMiB)} → ${fixed(settled[settled.length - 1]?.rssMiB)} MiB, ` +
      `least-squares slope ${fixed(
        perMinute((s) => s.rssMiB),
        2,
      )} MiB/min; heap in use slope ${fixed(
        perMinute((s) => s.heapMiB),
        2,
      )} MiB/min; ` +
      `event-loop delay p99 slope ${fixed(
        perMinute((s) => s.eldP99Ms),
        3,
      )} ms/min; handles ${Math.min(...settled.map((s) => s.handles))}–${Math.max(...settled.map((s) => s.handles))}, ` +
      `slope ${fixed(
        perMinute((s) => s.handles),
        2,
      )}/min. ${total.toLocaleString('en')} requests, ${failed} failed.`,
  );
  return lines.join('\n');
}
