// One request at a time, split by hop: where the milliseconds of a balance read and of a bank
// account go when nothing is queued or batched. The packets on loopback between the client, the
// gateway, PostgreSQL and the sandbox are captured (tcpdump, Debian's package; capturing needs root
// or CAP_NET_RAW), so nothing is added to the processes measured; each request's packets, in order,
// give the gateway's own time between what it received and what it sent next, and the time
// PostgreSQL and the provider took to answer it.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'undici';
import { benchDatabase, percentile, scratchDir, table } from './support.mjs';
import { bankAccountBody, providerBalancePath, providerSide, startBenchGateway, startBenchSandbox } from './throughput.mjs';

/** Back to back before each call is measured. */
const WARM_UP_REQUESTS = 3000;

/** The four parties of a request, by the letter each hop names them with. */
const PEERS = { C: 'the client', G: 'the gateway', P: 'PostgreSQL', S: 'the provider' };

/** tcpdump on loopback, for the ports given, into `file`: resolves once it listens. */
async function capture(file, ports) {
  const filter = `tcp and (${ports.map((port) => `port ${port}`).join(' or ')})`;
  const dump = spawn('tcpdump', ['-i', 'lo', '-n', '-s', '128', '-B', '16384', '--immediate-mode', '-U', '-w', file, filter], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  await new Promise((resolve, reject) => {
    dump.once('error', (error) => reject(new Error(`tcpdump could not start (apt-get install tcpdump): ${error.message}`)));
    dump.once('exit', (code) => reject(new Error(`tcpdump exited ${code}: ${said.trim()} (capturing needs root or CAP_NET_RAW)`)));
    dump.stderr.on('data', (chunk) => {
      said += chunk;
      if (said.includes('listening on')) resolve();
    });
  });
  dump.removeAllListeners('exit');
  return async () => {
    const exited = new Promise((resolve) => dump.once('exit', resolve));
    dump.kill('SIGINT');
    await exited;
  };
}

/** The packets with data in `file`, in order: when, and which hop (e.g. `G>P`: the gateway to PostgreSQL). */
function packetsOf(file, roles) {
  return new Promise((resolve, reject) => {
    const read = spawn('tcpdump', ['-r', file, '-n', '-tt', '-q'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    read.stdout.on('data', (chunk) => (text += chunk));
    read.once('error', reject);
    read.once('exit', () => {
      const packets = [];
      for (const line of text.split('\n')) {
        const match = /^(\d+\.\d+) IP [\d.]+\.(\d+) > [\d.]+\.(\d+): tcp (\d+)/.exec(line);
        if (!match || match[4] === '0') continue;
        const from = roles.get(match[2]) ?? 'C';
        const to = roles.get(match[3]) ?? 'C';
        // The gateway's connections to PostgreSQL and to the provider come from ports of its own.
        packets.push({ at: Number(match[1]) * 1000, hop: `${from === 'C' && to !== 'G' ? 'G' : from}>${to === 'C' && from !== 'G' ? 'G' : to}` });
      }
      resolve(packets);
    });
  });
}

/**
 * Each request's hops, from the client's packet to the gateway to the gateway's answer, packets in
 * a row on the same hop taken as one message (from the first to the last).
 */
function requestsOf(packets) {
  const requests = [];
  let current;
  for (const packet of packets) {
    // One client connection, one request at a time: a request starts with the client's first packet after an answer.
    if (packet.hop === 'C>G' && (current === undefined || current.some((hop) => hop.hop === 'G>C'))) {
      current = [];
      requests.push(current);
    }
    if (current === undefined) continue;
    const last = current.at(-1);
    if (last?.hop === packet.hop) last.until = packet.at;
    else current.push({ hop: packet.hop, at: packet.at, until: packet.at });
  }
  // What the gateway did after answering (its sealing, say) belongs to no request.
  return requests.filter((hops) => hops.some((hop) => hop.hop === 'G>C')).map((hops) => hops.slice(0, hops.findLastIndex((hop) => hop.hop === 'G>C') + 1));
}

/** What the time between two messages was, and whose: the gateway's own work (`G`), or a peer answering it (`P`, `S`). */
function spanOf(before, after, counts) {
  const [from, to] = before.hop.split('>');
  if (from === 'G' && after.hop === `${to}>G`) {
    counts[to] = (counts[to] ?? 0) + 1;
    return { name: `${PEERS[to]} answers (${to === 'P' ? 'statement' : 'call'} ${counts[to]})`, whose: to };
  }
  return { name: `the gateway: ${PEERS[from]}'s message → its message to ${PEERS[after.hop.split('>')[1]]}`, whose: 'G' };
}

/** The commonest sequence of hops, and each span's median and p90 in it. */
function spansOf(requests) {
  const byShape = new Map();
  for (const hops of requests) {
    const shape = hops.map((hop) => hop.hop).join(' ');
    byShape.set(shape, [...(byShape.get(shape) ?? []), hops]);
  }
  if (byShape.size === 0) throw new Error('no whole request in the capture: were the packets on loopback captured?');
  const [shape, alike] = [...byShape.entries()].sort((a, b) => b[1].length - a[1].length)[0];
  const counts = {};
  const spans = alike[0].slice(1).map((hop, index) => {
    const ms = alike.map((hops) => hops[index + 1].at - hops[index].until).sort((a, b) => a - b);
    return { ...spanOf(alike[0][index], hop, counts), p50: percentile(ms, 50), p90: percentile(ms, 90) };
  });
  const whole = alike.map((hops) => hops.at(-1).at - hops[0].at).sort((a, b) => a - b);
  return { shape, requests: alike.length, of: requests.length, spans, p50: percentile(whole, 50) };
}

/**
 * `count` requests one at a time, `gapMs` apart, each made by `next()` before its clock starts:
 * the client's p50, from sending to the answer's last byte.
 */
async function oneAtATime(url, next, count, gapMs) {
  const client = new Client(url, { pipelining: 1 });
  const ms = [];
  let failures = 0;
  try {
    for (let i = 0; i < count; i++) {
      const one = await next();
      const started = process.hrtime.bigint();
      const answer = await client.request(one);
      await answer.body.dump();
      ms.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (answer.statusCode >= 300) failures++;
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  } finally {
    await client.close();
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), failures };
}

/** Each call twice: through the gateway (as the throughput bench sends it), and as the gateway sends it to the sandbox. */
function callsOf(gateway, dataDir) {
  const { cipher, signer, providerAuth } = providerSide(dataDir);
  const partner = (template) => () => {
    const { method, path, headers, body } = template.setupRequest ? template.setupRequest({ ...template }) : template;
    return { method, path, headers, body };
  };
  return {
    balance: {
      through: partner(gateway.targets.balance.requests[0]),
      direct: () => ({ method: 'GET', path: providerBalancePath(gateway.customerId), headers: providerAuth }),
    },
    'bank account': {
      through: partner(gateway.targets['bank account'].requests[0]),
      direct: async () => {
        const body = bankAccountBody(gateway.customerId);
        const headers = { ...providerAuth, 'content-type': 'application/json', signature: signer.sign(body.reference) };
        return { method: 'POST', path: '/payments/banks/account', headers, body: JSON.stringify(await cipher.seal(body)) };
      },
    },
  };
}

export async function timeline({ requests, calls, gapMs }) {
  const log = (line) => process.stderr.write(`[bench] ${line}\n`);
  const database = await benchDatabase(log);
  const dataDir = scratchDir('pgw-timeline-');
  const started = [];
  try {
    const { sandbox, sandboxUrl } = await startBenchSandbox(dataDir);
    started.push(sandbox);
    const gateway = await startBenchGateway({ database, dataDir, sandboxUrl });
    started.push(gateway.process);
    const byCall = callsOf(gateway, dataDir);
    const ports = [new URL(gateway.url).port, new URL(sandboxUrl).port, new URL(database.url).port];
    const roles = new Map([
      [ports[0], 'G'],
      [ports[1], 'S'],
      [ports[2], 'P'],
    ]);
    const results = [];
    for (const call of calls) {
      const { through, direct } = byCall[call] ?? {};
      if (!through) throw new Error(`unknown call ${call}: balance | bank account`);
      // Warm: the code paths optimised and the connections open, as the throughput bench's loads at
      // saturation leave them before its one-at-a-time phase.
      await oneAtATime(gateway.url, through, WARM_UP_REQUESTS, 0);
      await oneAtATime(sandboxUrl, direct, WARM_UP_REQUESTS, 0);
      const straight = await oneAtATime(sandboxUrl, direct, requests, gapMs);
      const file = join(dataDir, `${call.replace(/\W/g, '-')}.pcap`);
      const stop = await capture(file, ports);
      let captured;
      try {
        captured = await oneAtATime(gateway.url, through, requests, gapMs);
      } finally {
        await stop();
      }
      // The same again with nothing capturing: what the capture itself costs shows beside it.
      const gatewayRun = await oneAtATime(gateway.url, through, requests, gapMs);
      results.push({ call, direct: straight, through: gatewayRun, captured, ...spansOf(requestsOf(await packetsOf(file, roles))) });
    }
    return { results, requests, database: database.description };
  } finally {
    for (const process of started.reverse()) await process.stop();
    await database.stop();
  }
}

export function report({ results, requests, database }) {
  const sections = results.map((result) => {
    const byPeer = (whose) => result.spans.filter((span) => span.whose === whose).reduce((sum, span) => sum + span.p50, 0);
    return [
      `### ${result.call}: ${requests} one at a time, ${result.of} found whole in the capture, ${result.requests} of them in the commonest order of hops (the spans below)`,
      `Through the gateway ${result.through.p50.toFixed(3)} ms (p50, timed by the client; ${result.captured.p50.toFixed(3)} while captured), straight to the sandbox ${result.direct.p50.toFixed(3)} ms: added ${(result.through.p50 - result.direct.p50).toFixed(3)} ms. Hops: \`${result.shape}\` (C the client, G the gateway, P PostgreSQL, S the provider).`,
      table(
        ['span, in order', 'p50 ms', 'p90 ms'],
        result.spans.map((span) => [span.name, span.p50.toFixed(3), span.p90.toFixed(3)]),
      ),
      `Sums of the medians: the gateway's own ${byPeer('G').toFixed(3)} ms, PostgreSQL ${byPeer('P').toFixed(3)} ms, the provider ${byPeer('S').toFixed(3)} ms; first packet in to answer out ${result.p50.toFixed(3)} ms (p50).`,
    ].join('\n');
  });
  return [`${database}. Packets captured on loopback by tcpdump; a span is the time between two messages on the wire.`, ...sections].join('\n\n');
}

export const failuresOf = ({ results }) =>
  results.reduce((sum, result) => sum + result.direct.failures + result.through.failures + result.captured.failures, 0);
