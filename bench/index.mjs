// npm run bench [-- <command> [options]]   (--help: this)
//   throughput [--connections 50] [--duration 10] [--rate 200] [--calls 'balance,audit search,bank account'] [--replicas 2] [--rounds 3] [--profile] [--allocations]
//                      the gateway against the sandbox, a bare proxy and two NestJS yardsticks;
//                      --replicas 2 also loads two gateway processes together; --rounds: the balance
//                      reads by each caller and the pass-through again, round after round, each ratio
//                      taken within a round (0: none); --profile samples the gateway's CPU,
//                      --allocations what it allocates (garbage included)
//   audit [--rows 10000000] [--without-index NAME]               the audit log at scale (--without-index: with that
//                                                               index dropped, to show what it is for)
//   lists [--accounts 1000000]                                  a partner's lists at scale: pages of bank accounts and
//                                                               customers for a tenant of that many accounts
//   seal [--rounds 3] [--duration 10] [--connections 50] [--events 1000000]
//                                                               sealing on and off, and verify's speed
//   soak [--minutes 10] [--rate 150] [--connections 20]          a steady load: memory, event-loop delay, handles
//                                                               (under a minute: one short segment, no fit)
//   compare --against DIR [--rounds 3] [--duration 10] [--call balance|'bank account'|'dpop balance'|'jwt balance'|'session balance'] [--profile]
//                                                              this checkout's gateway and another work tree's
//                                                               (built there), a balance read on each in turn,
//                                                               round after round, beside the NestJS pass-through;
//                                                               --profile: each one's CPU per request by layer,
//                                                               and the functions that differ most
//   memory [--rounds 2] [--duration 8] [--variants=';A;B'] [--promoted]
//                                                               one gateway at a time: idle and peak resident memory
//                                                               and CPU per request; each variant is Node flags (--name or
//                                                               --name=value) and/or NAME=value words beside the image's
//                                                               flags ('' = as it runs; write --variants=… when the first
//                                                               variant starts with --); --promoted also samples what
//                                                               outlived the young generation per request, and where
//   timeline [--requests 300] [--gap 5] [--calls 'balance,bank account']
//                                                               one request at a time (--gap ms between them), split by
//                                                               hop from the packets on loopback (tcpdump, as root): the
//                                                               gateway's own time, and PostgreSQL's and the provider's
//   webhooks [--events 2000] [--connections 20] [--duration 10]
//                                                               webhook delivery: one worker draining a backlog of
//                                                               account openings' events (events/s), then the delivery
//                                                               lag while the API serves balance reads and openings
//   path [--against DIR]                                        one balance read, file by file: the service's source
//                                                               files that run for it (V8 coverage, three windows of
//                                                               one request each); --against: another work tree's too
//   all                                                         throughput and audit (the default)
// A request that fails or answers other than 2xx makes the run exit 1 after its report: figures
// measured on errors are not figures. .ci/run runs each command in a smoke form (seconds, tiny sizes).
// BENCH_DATABASE_URL=postgres://… runs against that server (in a scratch database); otherwise an
// embedded PostgreSQL is started in a scratch directory. BENCH_REDIS_URL=redis://… makes the gateways
// remember DPoP proofs in that Redis (DPOP_REPLAY_REDIS_URL) instead of PostgreSQL.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The usage above, as this file's leading comment says it. */
function usage() {
  const lines = readFileSync(new URL(import.meta.url), 'utf8').split('\n');
  return lines
    .slice(
      0,
      lines.findIndex((line) => !line.startsWith('//')),
    )
    .map((line) => line.slice(3))
    .join('\n');
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean', default: false },
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '10' },
      rate: { type: 'string', default: '200' },
      calls: { type: 'string', default: 'balance,audit search,bank account' },
      call: { type: 'string' },
      rows: { type: 'string', default: '10000000' },
      'without-index': { type: 'string' },
      replicas: { type: 'string', default: '2' },
      profile: { type: 'boolean', default: false },
      allocations: { type: 'boolean', default: false },
      promoted: { type: 'boolean', default: false },
      rounds: { type: 'string', default: '3' },
      events: { type: 'string', default: '1000000' },
      accounts: { type: 'string', default: '1000000' },
      minutes: { type: 'string', default: '10' },
      against: { type: 'string' },
      variants: { type: 'string', default: '' },
      requests: { type: 'string', default: '300' },
      gap: { type: 'string', default: '5' },
    },
  });
} catch (error) {
  process.stderr.write(`${error.message}\n\n${usage()}\n`);
  process.exit(2);
}
const { positionals, values } = parsed;
if (values.help) {
  process.stdout.write(`${usage()}\n`);
  process.exit(0);
}
const command = positionals[0] ?? 'all';
if (!['throughput', 'audit', 'lists', 'seal', 'soak', 'compare', 'memory', 'timeline', 'path', 'webhooks', 'all'].includes(command)) {
  process.stderr.write(`unknown command ${command}: throughput | audit | lists | seal | soak | compare | memory | timeline | path | webhooks | all\n`);
  process.exit(2);
}

/** An option's value when it was given, else the command's own default. */
const explicit = (name, fallback) => (process.argv.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`)) ? Number(values[name]) : fallback);
const started = Date.now();
let failed = 0;
const failuresIn = (runs) => runs.reduce((sum, run) => sum + run.failures, 0);
if (command === 'throughput' || command === 'all') {
  if (!/^\d+$/.test(values.rounds)) {
    process.stderr.write(`--rounds is a whole number of rounds (0: none), not ${values.rounds}\n\n${usage()}\n`);
    process.exit(2);
  }
  if (explicit('rounds', 0) > 0 && !values.calls.split(',').some((call) => call.trim() === 'balance'))
    process.stderr.write('[bench] --rounds pairs the balance reads, and --calls leaves them out: no paired rounds\n');
  const { throughput, report } = await import('./throughput.mjs');
  const result = await throughput({
    connections: Number(values.connections),
    duration: Number(values.duration),
    rate: Number(values.rate),
    profile: values.profile,
    allocations: values.allocations,
    replicas: Number(values.replicas),
    rounds: Number(values.rounds),
    calls: values.calls.split(',').map((call) => call.trim()),
  });
  process.stdout.write(`\n## Throughput\n\n${report(result)}\n`);
  failed += failuresIn([...result.rows, ...result.paced, ...result.pairs]);
  if (values.profile) {
    const { summariseProfiles } = await import('./profile.mjs');
    process.stdout.write(`\n## Where the gateway's time goes (CPU profile)\n\n${summariseProfiles()}\n`);
  }
  if (values.allocations) {
    const { summariseAllocations } = await import('./allocations.mjs');
    process.stdout.write(`\n## What the gateway allocates (sampled heap profile, garbage included)\n\n${summariseAllocations()}\n`);
  }
}
if (command === 'compare') {
  if (!values.against) {
    process.stderr.write('compare needs --against DIR: another work tree of the gateway, built there (npm run build)\n');
    process.exit(2);
  }
  const { compare, report } = await import('./compare.mjs');
  const result = await compare({
    against: values.against,
    rounds: Number(values.rounds),
    duration: Number(values.duration),
    connections: Number(values.connections),
    ...(values.call ? { call: values.call } : {}),
    profile: values.profile,
  });
  process.stdout.write(`\n## Two builds, side by side\n\n${report(result)}\n`);
  failed += Object.values(result.results)
    .flat()
    .reduce((sum, run) => sum + run.failures, 0);
}
if (command === 'memory') {
  const { memory, report } = await import('./memory.mjs');
  const result = await memory({
    variants: values.variants.split(';'),
    promoted: values.promoted,
    rounds: explicit('rounds', 2),
    duration: explicit('duration', 8),
    connections: Number(values.connections),
  });
  process.stdout.write(`\n## Resident memory, one gateway at a time\n\n${report(result)}\n`);
  failed += Object.values(result.results)
    .flat()
    .reduce((sum, run) => sum + run.failures, 0);
}
if (command === 'timeline') {
  const { timeline, report, failuresOf } = await import('./timeline.mjs');
  const result = await timeline({
    requests: Number(values.requests),
    gapMs: Number(values.gap),
    // The two calls with a provider behind them, unless --calls names others.
    calls: process.argv.some((arg) => arg === '--calls' || arg.startsWith('--calls='))
      ? values.calls.split(',').map((call) => call.trim())
      : ['balance', 'bank account'],
  });
  process.stdout.write(`\n## One request at a time, hop by hop\n\n${report(result)}\n`);
  failed += failuresOf(result);
}
if (command === 'path') {
  const { requestPath, report } = await import('./request-path.mjs');
  process.stdout.write(`\n## One request, file by file\n\n${report(await requestPath({ against: values.against }))}\n`);
}
if (command === 'audit' || command === 'all') {
  const { auditAtScale, report } = await import('./audit-scale.mjs');
  process.stdout.write(`\n## The audit log at scale\n\n${report(await auditAtScale({ rows: Number(values.rows), withoutIndex: values['without-index'] }))}\n`);
}
if (command === 'webhooks') {
  const { webhookDelivery, report } = await import('./webhooks.mjs');
  const result = await webhookDelivery({
    events: explicit('events', 2000),
    connections: explicit('connections', 20),
    duration: Number(values.duration),
  });
  process.stdout.write(`\n## Webhook delivery\n\n${report(result)}\n`);
  failed += result.failures;
}
if (command === 'lists') {
  const { listsAtScale, report } = await import('./lists.mjs');
  process.stdout.write(`\n## A partner's lists at scale\n\n${report(await listsAtScale({ accounts: Number(values.accounts) }))}\n`);
}
if (command === 'seal') {
  const { sealing, report } = await import('./sealing.mjs');
  const result = await sealing({
    connections: Number(values.connections),
    duration: Number(values.duration),
    rounds: Number(values.rounds),
    events: Number(values.events),
  });
  process.stdout.write(`\n## Sealing the audit log\n\n${report(result)}\n`);
  failed += failuresIn(Object.values(result.load.results).flat());
}
if (command === 'soak') {
  const { soak, report } = await import('./soak.mjs');
  const result = await soak({ minutes: Number(values.minutes), rate: explicit('rate', 150), connections: explicit('connections', 20) });
  process.stdout.write(`\n## Soak\n\n${report(result)}\n`);
  failed += failuresIn(result.rows);
}
process.stdout.write(`\n(${((Date.now() - started) / 1000).toFixed(0)} s in all)\n`);
if (failed > 0) process.stderr.write(`[bench] ${failed} requests failed or answered other than 2xx: see the tables above\n`);
process.exit(failed > 0 ? 1 : 0);
