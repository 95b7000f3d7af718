// Two builds of the gateway side by side, for a change to the request path: this checkout's and
// another's (`--against DIR`, a work tree with its own `npm run build`), on one PostgreSQL and one
// sandbox, with the NestJS pass-through as the yardstick. A partner's balance read (or, with
// `--call 'bank account'`, a bank account opened with a reference of its own; with `--call 'dpop
// balance'`, an end user's balance read with a DPoP-bound token and a new proof each, against the
// development OpenID provider; `'jwt balance'`, with a bearer access token; `'session balance'`,
// with a web app's session cookie; the pass-through loaded with the partner's read) is loaded on each in
// turn, round after round, in a different order each round, so that whatever else the machine
// does falls on both alike. Reported: each round's figures, and the medians; PostgreSQL's CPU per
// request too, when it runs on this machine (a bank account's cost is mostly there).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { perRequest } from './profile.mjs';
import { benchDatabase, devDist, fixed, freePort, median, postmasterOf, ROOT, scratchDir, startNode, table } from './support.mjs';
import {
  createPartnerClient,
  END_USER_AUDIENCE,
  TOKEN_SECONDS,
  endUserCallers,
  firstWarmUp,
  measure,
  MOST_REQUESTS_PER_SECOND,
  ownerEnv,
  partnerRequests,
  SANDBOX_TOKEN,
  startBenchGatewayProcess,
  startBenchSandbox,
  WARM_UP_S,
} from './throughput.mjs';

export const CALLS = ['balance', 'bank account', 'dpop balance', 'jwt balance', 'session balance'];
/** The calls made by an end user of the development OpenID provider, each build with its own. */
const END_USER_CALLS = new Set(['dpop balance', 'jwt balance', 'session balance']);

export async function compare({ against, rounds = 5, duration = 5, connections = 50, call = 'balance', profile = false }) {
  if (!CALLS.includes(call)) throw new Error(`--call is one of ${CALLS.join(', ')}`);
  const other = resolve(against);
  if (!existsSync(join(other, 'dist', 'src', 'main.js'))) throw new Error(`${other} has no dist/src/main.js: run npm run build there first`);
  const log = (message) => process.stderr.write(`[bench] ${message}\n`);
  const dataDir = scratchDir('pgw-bench-compare-');
  const database = await benchDatabase(log);
  const started = [];
  // With --profile: each build's CPU profile over the measured rounds (warm-ups included), in bench/profiles.
  const profiles = {};
  let result;
  try {
    const { sandbox, sandboxUrl } = await startBenchSandbox(dataDir);
    started.push(sandbox);
    const env = {};
    let identityProvider;
    if (END_USER_CALLS.has(call)) {
      // The partner's OpenID provider (the development one, in this process): end users' tokens.
      const { startDevIdentityProvider } = devDist('identity-provider/dev-identity-provider.js');
      identityProvider = await startDevIdentityProvider({ port: 0, audience: END_USER_AUDIENCE, accessTokenSeconds: TOKEN_SECONDS });
      started.push({ stop: () => identityProvider.close() });
      env.OIDC_ISSUER = identityProvider.issuer;
    }
    if (call === 'session balance') {
      // Web apps' browser sessions: each build is the development provider's partner-web client.
      Object.assign(env, { OIDC_CLIENT_ID: 'partner-web', OIDC_CLIENT_SECRET: 'partner-web-secret', SESSION_KEY: randomBytes(32).toString('base64') });
    }
    const builds = {};
    for (const [name, root] of [
      ['this checkout', undefined],
      [`--against ${against}`, other],
    ]) {
      const sampled = {};
      if (profile) {
        const dir = join(ROOT, 'bench', 'profiles');
        mkdirSync(dir, { recursive: true });
        profiles[name] = join(dir, `compare-${Object.keys(profiles).length + 1}-${Date.now()}.cpuprofile`);
        Object.assign(sampled, { nodeArgs: ['--require', join(ROOT, 'bench', 'cpu-sampler.cjs')], env: { ...env, BENCH_CPU_PROFILE: profiles[name] } });
      }
      const { process: gateway, url } = await startBenchGatewayProcess({ database, dataDir, sandboxUrl, env, ...sampled, ...(root ? { root } : {}) });
      started.push(gateway);
      builds[name] = { pid: gateway.child.pid, child: gateway.child, url };
    }
    const passthroughPort = await freePort();
    const passthrough = await startNode(
      ['bench/nest-yardsticks.mjs'],
      {
        UPSTREAM_BASE_URL: sandboxUrl,
        UPSTREAM_BEARER_TOKEN: SANDBOX_TOKEN,
        UPSTREAM_PUBLIC_KEY: join(dataDir, 'sandbox', 'public.pem'),
        DATABASE_URL: database.url,
        MODE: 'passthrough',
        PORT: String(passthroughPort),
      },
      /listening/,
    );
    started.push(passthrough);
    const yardstick = 'NestJS pass-through';
    builds[yardstick] = { pid: passthrough.child.pid, url: `http://127.0.0.1:${passthroughPort}` };

    const token = await createPartnerClient('bench-compare', ownerEnv(database));
    const { balance, bankAccount } = await partnerRequests(builds['this checkout'].url, token);
    const loaded = call === 'bank account' ? bankAccount : balance;
    // A DPoP proof names its gateway's URL, a session cookie is its gateway's: each build has its own end user's request.
    const endUsers = {};
    if (identityProvider) {
      const gateways = Object.keys(builds).filter((name) => name !== yardstick);
      await identityProvider.setWebOrigins(gateways.map((name) => builds[name].url));
      const { webLogin } = devDist('identity-provider/dev-login.js');
      for (const name of gateways) {
        const callers = await endUserCallers(env.OIDC_ISSUER, builds[name].url);
        const cookie = call === 'session balance' ? `__Host-gw_session=${(await webLogin(builds[name].url, 'demo')).session}` : undefined;
        endUsers[name] = {
          ...callers,
          request:
            call === 'dpop balance'
              ? callers.dpopBalance
              : call === 'jwt balance'
                ? callers.bearerBalance
                : { ...callers.bearerBalance, headers: { cookie, 'x-csrf': '1' } },
        };
      }
    }
    const postmaster = await postmasterOf(database.url);

    const names = Object.keys(builds);
    const processes = {
      ...Object.fromEntries(names.map((name) => [name, { pid: builds[name].pid }])),
      ...(postmaster ? { PostgreSQL: { pid: postmaster, tree: true } } : {}),
    };
    const results = Object.fromEntries(names.map((name) => [name, []]));
    for (const name of Object.keys(profiles)) process.kill(builds[name].pid, 'SIGUSR2');
    for (let round = 0; round < rounds; round++) {
      // Each round starts with a different one.
      const order = names.map((_, i) => names[(i + round) % names.length]);
      for (const name of order) {
        const endUser = endUsers[name];
        // Each server's first load is warmed up longer, as in a throughput run: neither build is measured as it starts.
        const warmUp = round === 0 ? firstWarmUp(duration) : WARM_UP_S;
        // Made just before the load: a proof is accepted for DPOP_PROOF_MAX_AGE_SECONDS only.
        if (endUser && call === 'dpop balance') await endUser.prepareProofs(Math.ceil((duration + warmUp) * MOST_REQUESTS_PER_SECOND));
        const requests = [endUser ? endUser.request : loaded];
        const row = await measure(name, { url: builds[name].url, requests }, { connections, duration, samplePid: builds[name].pid, processes, warmUp });
        if (endUser && call === 'dpop balance' && endUser.proofsUsed() > endUser.proofsMade())
          log(`warning: ${name}: DPoP proofs ran out; some were replayed and refused`);
        results[name].push({
          rps: row.rps,
          cpu: row.cpuMsPerRequest[name],
          database: row.cpuMsPerRequest.PostgreSQL,
          p50: row.p50,
          failures: row.failures,
          rss: row.peakRssMiB,
        });
        log(`round ${round + 1}: ${name}: ${fixed(row.rps, 0)} req/s, ${fixed(row.cpuMsPerRequest[name], 3)} CPU ms per request`);
      }
    }
    // The profiles end with the last round, before the gateways stop.
    for (const name of Object.keys(profiles)) if (running(builds[name].child)) builds[name].child.kill('SIGUSR2');
    for (const [name, file] of Object.entries(profiles)) await profileWritten(file, builds[name].child);
    result = { results, names, yardstick, rounds, duration, connections, call, database: database.description };
  } finally {
    for (const process of started.reverse()) await process.stop();
    await database.stop();
  }
  // Written by each gateway when told after the last round, or as it exits: one that was killed, or ended before, wrote none.
  const written = Object.entries(profiles).filter(([name, file]) => {
    if (!existsSync(file)) log(`warning: ${name} wrote no CPU profile`);
    return existsSync(file);
  });
  if (written.length === 2) result.profiles = Object.fromEntries(written.map(([name, file]) => [name, perRequest(JSON.parse(readFileSync(file, 'utf8')))]));
  return result;
}

const running = (child) => child.exitCode === null && child.signalCode === null;

/** Waits up to a minute for a gateway to write its profile (a large one takes seconds), or to have ended without. */
async function profileWritten(file, child) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && !existsSync(file) && running(child);)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

const DESCRIBED = {
  balance: "A partner's balance read",
  'bank account': 'A partner opening a bank account (a new reference each)',
  'dpop balance': "An end user's balance read with a DPoP-bound token and a new proof each (the pass-through: a partner's read)",
  'jwt balance': "An end user's balance read with a bearer access token (the pass-through: a partner's read)",
  'session balance': "An end user's balance read with a web app's session cookie (the pass-through: a partner's read)",
};

/** Each build's CPU per request by layer, and the functions whose self time differs most between the two builds. */
function profileReport(profiles) {
  const [mine, theirs] = Object.keys(profiles);
  const a = profiles[mine];
  const b = profiles[theirs];
  const rows = (key) => {
    const names = new Set([...a[key].keys(), ...b[key].keys()]);
    return [...names].map((name) => [name, a[key].get(name) ?? 0, b[key].get(name) ?? 0]);
  };
  const us = (value) => fixed(value, 2);
  return [
    `CPU profiles of the two gateways over the measured rounds (each round's warm-up included; ${a.requests} and ${b.requests} requests): self time in µs per request, busy time only. ` +
      "The profiler's own sampling is in both gateways' CPU above: compare them with each other, not with the pass-through.",
    '',
    table(
      ['Layer (charged)', mine, theirs, 'difference'],
      [
        ...rows('byLayer')
          .sort((x, y) => y[1] - x[1])
          .map(([name, x, y]) => [name, us(x), us(y), us(x - y)]),
        ['all', us(a.busy), us(b.busy), us(a.busy - b.busy)],
      ],
    ),
    '',
    table(
      ['Function (self time), the 15 that differ most', mine, theirs, 'difference'],
      rows('byFunction')
        .sort((x, y) => Math.abs(y[1] - y[2]) - Math.abs(x[1] - x[2]))
        .slice(0, 15)
        .map(([name, x, y]) => [name, us(x), us(y), us(x - y)]),
    ),
  ].join('\n');
}

export function report({ results, names, yardstick, rounds, duration, connections, call = 'balance', database, profiles }) {
  const perRound = (name, pick) => results[name].map(pick);
  const ratio = (name) => results[name].map((r, i) => r.cpu / results[yardstick][i].cpu);
  const lines = [
    `${DESCRIBED[call]}, ${connections} connections, ${rounds} rounds of ${duration} s each (after a ${WARM_UP_S} s warm-up; ${firstWarmUp(duration)} s before each one's first), the builds in a different order each round; database: ${database}.`,
    '',
    table(
      [
        'Build',
        'req/s (median)',
        'p50 ms (median)',
        'CPU ms per request (median)',
        'PostgreSQL CPU ms per request (median)',
        'CPU ÷ pass-through, same round (median; each round)',
        'peak RSS MiB',
        'errors',
      ],
      names.map((name) => [
        name,
        fixed(median(perRound(name, (r) => r.rps)), 0),
        fixed(median(perRound(name, (r) => r.p50)), 1),
        fixed(median(perRound(name, (r) => r.cpu)), 3),
        fixed(median(perRound(name, (r) => r.database ?? NaN)), 3),
        name === yardstick
          ? '1.00'
          : `${fixed(median(ratio(name)), 2)} (${ratio(name)
              .map((v) => fixed(v, 2))
              .join(', ')})`,
        fixed(Math.max(...perRound(name, (r) => r.rss ?? 0)), 0),
        String(perRound(name, (r) => r.failures).reduce((a, b) => a + b, 0)),
      ]),
    ),
  ];
  const [mine, theirs] = names;
  const paired = results[mine].map((r, i) => r.cpu / results[theirs][i].cpu);
  lines.push(
    '',
    `This checkout's CPU per request ÷ the other's, round by round: ${paired.map((v) => fixed(v, 2)).join(', ')} (median ${fixed(median(paired), 2)}).`,
  );
  if (profiles) lines.push('', profileReport(profiles));
  return lines.join('\n');
}
