// Reads the newest .cpuprofile in bench/profiles and lists where the CPU went, by self time,
// grouped by function and by package (or the gateway's own source folder).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fixed, ROOT, table } from './support.mjs';

function owner(url) {
  if (!url) return '(native / V8)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  const own = /dist\/src\/([^/]+)/.exec(url);
  if (own) return `gateway: ${own[1]}/`;
  if (url.startsWith('node:')) return 'node core';
  return url;
}

export function summariseProfiles(dir = join(ROOT, 'bench', 'profiles')) {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (files.length === 0) return 'no profile found';
  const profile = JSON.parse(readFileSync(files[0], 'utf8'));
  const interval = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length);
  const total = profile.samples.length;
  const hits = new Map(profile.nodes.map((node) => [node.id, 0]));
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const byFunction = new Map();
  const byOwner = new Map();
  for (const node of profile.nodes) {
    const count = hits.get(node.id) ?? 0;
    if (count === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    const key = `${functionName || '(anonymous)'} ${owner(url)}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + count);
    const group = ['(garbage collector)', '(program)'].includes(functionName) ? functionName : owner(url);
    byOwner.set(group, (byOwner.get(group) ?? 0) + count);
  }
  const busy = [...byOwner.values()].reduce((a, b) => a + b, 0);
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, count]) => [name, fixed((100 * count) / busy, 1) + '%']);
  return [
    `${files[0].slice(ROOT.length + 1)}: ${fixed((total * interval) / 1e6, 1)} s sampled, ${fixed((100 * busy) / total, 0)}% busy. Shares are of busy time.`,
    '',
    table(['By package or folder', 'self time'], top(byOwner, 15)),
    '',
    table(['By function', 'self time'], top(byFunction, 15)),
  ].join('\n');
}
