// The gateway's resident memory, one process at a time. Each variant (Node flags or environment
// beside the image's own flags and allocator, or none; `LD_PRELOAD=` runs glibc's malloc) is
// started fresh on one PostgreSQL and one sandbox, measured idle, then loaded with balance reads
// and with bank accounts; the variants take turns, in a different order each round, so that
// whatever else the machine does falls on all alike.
// Reported per variant and round: resident memory idle (and how much of it is anonymous, and the
// files mapped: the Node binary's own pages most of all), the peak (VmHWM: since the process
// started, so start-up's own peak too, and the first gateway's start runs the migrations), and the
// gateway's CPU per request in each load, since a setting that saves memory may cost CPU.
// With --promoted, also what outlived the young generation per request during the two loads
// (allocation-sampler.cjs, sampled): the old generation's growth, which is the peak's.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promotedIn } from './allocations.mjs';
import { benchDatabase, fixed, ROOT, scratchDir, table } from './support.mjs';
import { createPartnerClient, measure, ownerEnv, partnerRequests, startBenchGatewayProcess, startBenchSandbox } from './throughput.mjs';

/** How long a started gateway is left alone before its idle memory is read. */
const SETTLE_MS = 6000;

/** A variant as written on the command line: `--flag` or `--flag=value` words go to Node, `NAME=value` words to the environment. */
export function parseVariant(text) {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const nodeArgs = words.filter((word) => word.startsWith('--'));
  const assignments = words.filter((word) => !word.startsWith('--'));
  const malformed = assignments.find((word) => !/^[A-Z_][A-Z0-9_]*=/.test(word));
  if (malformed) throw new Error(`--variants: "${malformed}" is neither a --node-flag nor NAME=value`);
  const env = Object.fromEntries(assignments.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
  return { name: words.length ? words.join(' ') : 'as the image runs', nodeArgs, env };
}

/** Resident memory of a process from /proc, MiB: all of it, its anonymous pages, its files' pages, and the peak. */
function residentOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  return { rss: mib('VmRSS'), anonymous: mib('RssAnon'), file: mib('RssFile'), peak: mib('VmHWM') };
}

export async function memory({ variants = [''], rounds = 2, duration = 8, connections = 50, promoted = false }) {
  const parsed = variants.map(parseVariant);
  const named = new Set(parsed.map((variant) => variant.name));
  if (named.size < parsed.length) throw new Error('--variants: each variant must differ from the others');
  const log = (message) => process.stderr.write(`[bench] ${message}\n`);
  const dataDir = scratchDir('pgw-bench-memory-');
  const database = await benchDatabase(log);
  const started = [];
  try {
    const { sandbox, sandboxUrl } = await startBenchSandbox(dataDir);
    started.push(sandbox);
    const results = Object.fromEntries(parsed.map((variant) => [variant.name, []]));
    let clients = 0;
    for (let round = 0; round < rounds; round++) {
      const order = parsed.map((_, i) => parsed[(i + round) % parsed.length]);
      for (const variant of order) {
        const profileDir = join(dataDir, `promoted-${round}-${clients}`);
        const sampler = promoted
          ? {
              nodeArgs: ['--require', join(ROOT, 'bench', 'allocation-sampler.cjs')],
              env: { BENCH_ALLOCATION_DIR: profileDir, BENCH_ALLOCATION_PROMOTED: '1' },
            }
          : { nodeArgs: [], env: {} };
        const {
          process: gateway,
          pid,
          url,
        } = await startBenchGatewayProcess({
          database,
          dataDir,
          sandboxUrl,
          nodeArgs: [...variant.nodeArgs, ...sampler.nodeArgs],
          env: { ...variant.env, ...sampler.env },
        });
        let run;
        try {
          const token = await createPartnerClient(`bench-memory-${++clients}`, ownerEnv(database));
          const { balance, bankAccount } = await partnerRequests(url, token);
          await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
          const idle = residentOf(pid);
          // From here on, what outlives the young generation is counted (--promoted).
          if (promoted) process.kill(pid, 'SIGUSR2');
          const processes = { gateway: { pid } };
          const reads = await measure('balance', { url, requests: [balance] }, { connections, duration, processes });
          const accounts = await measure('bank account', { url, requests: [bankAccount] }, { connections, duration, processes });
          const { peak } = residentOf(pid);
          run = {
            idle,
            peak,
            balanceCpu: reads.cpuMsPerRequest.gateway,
            bankAccountCpu: accounts.cpuMsPerRequest.gateway,
            failures: reads.failures + accounts.failures,
          };
        } finally {
          // The sampler writes its profile as the process exits.
          await gateway.stop();
        }
        if (promoted) {
          const profile = readdirSync(profileDir).find((file) => file.endsWith('.heapprofile'));
          if (profile === undefined) throw new Error(`--promoted: the gateway wrote no profile in ${profileDir}`);
          run.promoted = promotedIn(join(profileDir, profile));
        }
        results[variant.name].push(run);
        log(
          `round ${round + 1}: ${variant.name}: idle ${fixed(run.idle.rss, 0)} MiB, peak ${fixed(run.peak, 0)} MiB, ` +
            `${fixed(run.balanceCpu, 3)} / ${fixed(run.bankAccountCpu, 3)} CPU ms per read / account` +
            (run.promoted ? `, ${fixed(run.promoted.bytesPerRequest, 0)} bytes promoted per request` : ''),
        );
      }
    }
    return { results, names: parsed.map((variant) => variant.name), rounds, duration, connections, database: database.description };
  } finally {
    for (const process of started.reverse()) await process.stop();
    await database.stop();
  }
}

export function report({ results, names, rounds, duration, connections, database }) {
  const promoted = names.some((name) => results[name].some((run) => run.promoted));
  const each = (name, pick, digits) =>
    results[name]
      .map(pick)
      .map((value) => fixed(value, digits))
      .join(', ');
  return [
    `One gateway at a time, started fresh for each round (${rounds}), idle ${SETTLE_MS / 1000} s after start, then ${duration} s of balance reads and ${duration} s of bank accounts at ${connections} connections (each after a 2 s warm-up); the variants in a different order each round; database: ${database}. Figures are per round.`,
    '',
    table(
      [
        'Variant (beside the image’s flags and allocator)',
        'idle RSS MiB',
        'of it anonymous / files',
        'peak RSS MiB',
        'gateway CPU ms per balance read',
        'per bank account',
        ...(promoted ? ['promoted bytes per request (sampled)'] : []),
        'errors',
      ],
      names.map((name) => [
        name,
        each(name, (run) => run.idle.rss, 0),
        results[name].map((run) => `${fixed(run.idle.anonymous, 0)} / ${fixed(run.idle.file, 0)}`).join(', '),
        each(name, (run) => run.peak, 0),
        each(name, (run) => run.balanceCpu, 3),
        each(name, (run) => run.bankAccountCpu, 3),
        ...(promoted ? [each(name, (run) => run.promoted?.bytesPerRequest ?? NaN, 0)] : []),
        String(results[name].reduce((sum, run) => sum + run.failures, 0)),
      ]),
    ),
    ...(promoted
      ? [
          '',
          'What was promoted, the largest sources by allocating function (each round):',
          '',
          ...names.flatMap((name) =>
            results[name].map(
              (run, round) =>
                `- ${name}, round ${round + 1}: ${(run.promoted?.top ?? []).map((source) => `${source.name} ${fixed(100 * source.share, 1)}%`).join('; ')}`,
            ),
          ),
        ]
      : []),
  ].join('\n');
}
