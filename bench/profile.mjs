// Reads the newest .cpuprofile in bench/profiles and says where the gateway's CPU went: by layer
// (framework, validation, auth, audit, provider client, database driver, logging, metrics…), and
// by package and by function, self time.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fixed, ROOT, table } from './support.mjs';

/** Who a frame belongs to: a package, a top folder of the gateway's own, Node's core, or V8. */
export function owner(url) {
  if (!url) return '(native / V8)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  const own = /dist\/src\/(.+)\.js$/.exec(url);
  if (own) return `gateway: ${own[1].split('/')[0]}/`;
  if (url.startsWith('node:')) return 'node core';
  return url;
}

/** Each layer: the packages and the gateway's own files that belong to it. First match wins. */
const LAYERS = [
  [
    'validation',
    [/class-validator|class-transformer|secure-json-parse/, /dist\/src\/common\/http\/(validation|field-rules|date\.validators|json-body)/, /\/dto\//],
  ],
  ['auth', [/dist\/src\/auth\//]],
  ['rate limiting', [/@nestjs\/throttler|ioredis/, /dist\/src\/rate-limit\//]],
  ['audit', [/dist\/src\/audit\//, /dist\/src\/database\/group-commit/]],
  ['idempotency', [/dist\/src\/idempotency\//]],
  ['provider client', [/\/undici\/|cockatiel|\/jose\//, /dist\/src\/upstream\//]],
  ['database driver', [/\/pg\/|pg-protocol|pg-pool|pg-types|typeorm/, /dist\/src\/database\//]],
  ['logging', [/pino|sonic-boom|thread-stream/, /dist\/src\/common\/runtime\/logging/]],
  ['metrics', [/prom-client/, /dist\/src\/metrics\//]],
  ['features (customers, balances, bank accounts)', [/dist\/src\/(customers|balances|bank-accounts)\//]],
  [
    'framework (Nest, Fastify, rxjs, helmet, the edge hooks)',
    [/@nestjs\/|rxjs|fastify|find-my-way|avvio|light-my-request|reflect-metadata|helmet/, /dist\/src\//],
  ],
];

function layerOf(url) {
  if (!url) return undefined;
  for (const [layer, patterns] of LAYERS) if (patterns.some((pattern) => pattern.test(url))) return layer;
  return undefined;
}

/** The newest file in `dir` whose name ends with `extension`, if any. */
export function newestIn(dir, extension) {
  return readdirSync(dir)
    .filter((name) => name.endsWith(extension))
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/**
 * Each function's self time, in µs per request the process served while it was profiled (a
 * profile written by cpu-sampler.cjs, which counts them), and each layer's (charged as in
 * summariseProfiles). Idle time is left out.
 */
export function perRequest(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byFunction = new Map();
  const byLayer = new Map();
  const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us / Math.max(1, profile.requests));
  let busy = 0;
  profile.samples.forEach((id, i) => {
    // A sample stands for the time until the next one.
    const us = profile.timeDeltas[i + 1] ?? 0;
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    if (functionName === '(idle)') return;
    busy += us / Math.max(1, profile.requests);
    add(byFunction, `${functionName || '(anonymous)'} ${owner(url)}:${lineNumber + 1}`, us);
    let layer;
    for (let at = id; at !== undefined && layer === undefined; at = parent.get(at)) layer = layerOf(nodes.get(at).callFrame.url);
    add(byLayer, layer ?? (['(garbage collector)', '(program)'].includes(functionName) ? functionName : 'Node core and native, no layer on the stack'), us);
  });
  return { busy, byFunction, byLayer, requests: profile.requests };
}

export function summariseProfiles(dir = join(ROOT, 'bench', 'profiles')) {
  const newest = newestIn(dir, '.cpuprofile');
  if (newest === undefined) return 'no profile found';
  const profile = JSON.parse(readFileSync(newest, 'utf8'));
  const interval = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length);
  const total = profile.samples.length;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const hits = new Map();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);

  const byFunction = new Map();
  const byOwner = new Map();
  const charged = new Map(); // each sample to the innermost frame that has a layer
  const inclusive = new Map(); // each sample to every layer on its stack, once
  const add = (map, key, count) => map.set(key, (map.get(key) ?? 0) + count);
  let busy = 0;
  for (const [id, count] of hits) {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    if (functionName === '(idle)') continue;
    busy += count;
    add(byFunction, `${functionName || '(anonymous)'} ${owner(url)}:${lineNumber + 1}`, count);
    const special = ['(garbage collector)', '(program)'].includes(functionName);
    add(byOwner, special ? functionName : owner(url), count);
    if (special) {
      add(charged, functionName, count);
      continue;
    }
    const seen = new Set();
    let innermost;
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const layer = layerOf(nodes.get(at).callFrame.url);
      if (!layer) continue;
      innermost ??= layer;
      seen.add(layer);
    }
    add(charged, innermost ?? 'Node core and native, no layer on the stack', count);
    for (const layer of seen) add(inclusive, layer, count);
  }
  const share = (count) => `${fixed((100 * (count ?? 0)) / busy, 1)}%`;
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, count]) => [name, share(count)]);
  const layers = [...new Set([...charged.keys(), ...inclusive.keys()])].sort((a, b) => (charged.get(b) ?? 0) - (charged.get(a) ?? 0));
  return [
    `${newest.slice(ROOT.length + 1)}: ${fixed((total * interval) / 1e6, 1)} s sampled, ${fixed((100 * busy) / total, 0)}% busy. Shares are of busy time.`,
    '',
    '"Charged": each sample goes to the innermost frame on its stack that belongs to a layer, so Node core and',
    'native work (a socket write, JSON.stringify, a hash) is charged to the layer that asked for it; the column',
    'sums to 100%. "Inclusive": the samples with the layer anywhere on their stack (an await starts a new stack).',
    '',
    table(
      ['Layer', 'charged', 'inclusive'],
      layers.map((layer) => [layer, share(charged.get(layer)), inclusive.has(layer) ? share(inclusive.get(layer)) : '—']),
    ),
    '',
    table(['By package or folder (self time)', 'self time'], top(byOwner, 15)),
    '',
    table(['By function (self time)', 'self time'], top(byFunction, 15)),
  ].join('\n');
}
