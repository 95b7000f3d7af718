// Reads the newest .heapprofile in bench/profiles (allocation-sampler.cjs) and says what the gateway
// allocated, garbage included: in all and per request served, by package or folder and by function.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newestIn, owner } from './profile.mjs';
import { fixed, ROOT, table } from './support.mjs';

/** A profile's sampled bytes in all, by package or folder and by function, and the requests it covers. */
function allocationsIn(file) {
  const { head, requests } = JSON.parse(readFileSync(file, 'utf8'));
  const byOwner = new Map();
  const byFunction = new Map();
  let total = 0;
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node) => {
    // selfSize: the node's sampled allocations, scaled by V8 to the bytes they stand for.
    const bytes = node.selfSize;
    if (bytes > 0) {
      const { functionName, url, lineNumber } = node.callFrame;
      total += bytes;
      add(byOwner, owner(url), bytes);
      add(byFunction, `${functionName || '(anonymous)'} ${owner(url)}:${lineNumber + 1}`, bytes);
    }
    for (const child of node.children ?? []) walk(child);
  };
  walk(head);
  return { total, requests, byOwner, byFunction };
}

/** What a `--promoted` profile (allocation-sampler.cjs) counted per request, and its largest sources by function. */
export function promotedIn(file, sources = 3) {
  const { total, requests, byFunction } = allocationsIn(file);
  const top = [...byFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, sources);
  return { bytesPerRequest: total / Math.max(1, requests), top: top.map(([name, bytes]) => ({ name, share: bytes / total })) };
}

export function summariseAllocations(dir = join(ROOT, 'bench', 'profiles')) {
  const newest = newestIn(dir, '.heapprofile');
  if (newest === undefined) return 'no allocation profile found';
  const { total, requests, byOwner, byFunction } = allocationsIn(newest);
  const share = (bytes) => `${fixed((100 * bytes) / total, 1)}%`;
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, bytes]) => [name, share(bytes), fixed(bytes / 1024 / Math.max(1, requests), 2)]);
  return [
    `${newest.slice(ROOT.length + 1)}: ${fixed(total / 1024 / 1024, 0)} MiB allocated (sampled, garbage included) over the ${requests} requests the process served: ` +
      `${fixed(total / 1024 / Math.max(1, requests), 1)} KiB per request, start-up included.`,
    '',
    table(['By package or folder (allocating frame)', 'share', 'KiB per request'], top(byOwner, 12)),
    '',
    table(['By function (allocating frame)', 'share', 'KiB per request'], top(byFunction, 15)),
  ].join('\n');
}
