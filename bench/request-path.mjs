// One request, file by file: which of the service's own source files run while a gateway serves it.
// The gateway runs with V8's coverage (NODE_V8_COVERAGE) and bench/coverage-window.cjs: after a
// warm-up, the counters are reset, one request is made, and what ran is written; a file counts when
// any of its functions was called in that window. Three windows, and only the files called in all
// three: a timer of the service's own (the sealer, a flush) that fires in one window is not the
// request's. `--against DIR` measures another work tree's build the same way, beside this one.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { benchDatabase, ROOT, scratchDir, table } from './support.mjs';
import { createPartnerClient, ownerEnv, partnerRequests, startBenchGatewayProcess, startBenchSandbox } from './throughput.mjs';

const WINDOWS = 3;
const WARM_UP = 30;

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The newest coverage file in `dir` once there are more than `count`. */
async function nextCoverage(dir, count) {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const files = readdirSync(dir).filter((file) => file.endsWith('.json'));
    if (files.length > count) return { files: files.length, newest: files.sort().at(-1) };
    await pause(20);
  }
  throw new Error('the gateway wrote no coverage: is bench/coverage-window.cjs preloaded?');
}

/** A coverage file once it is whole (V8 writes it as the signal is handled: it may be read half written). */
async function coverageOf(file) {
  for (let tries = 0; ; tries++) {
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      if (tries > 200) throw error;
      await pause(20);
    }
  }
}

/** The service's source files (src/…, .ts) whose functions were called in a coverage file, for a build under `root`. */
async function calledFiles(file, root) {
  const { result } = await coverageOf(file);
  const built = `file://${join(root, 'dist', 'src')}/`;
  const called = new Set();
  for (const script of result) {
    if (!script.url.startsWith(built)) continue;
    if (script.functions.some((fn) => fn.ranges[0].count > 0)) {
      called.add(`src/${relative(join(root, 'dist', 'src'), script.url.slice('file://'.length)).replace(/\.js$/, '.ts')}`);
    }
  }
  return called;
}

/** What one build's gateway runs for one request: the files called in every window. */
async function measure(root, { database, dataDir, sandboxUrl, request }) {
  const coverage = scratchDir('pgw-bench-coverage-');
  const {
    process: gateway,
    pid,
    url,
  } = await startBenchGatewayProcess({
    database,
    dataDir,
    sandboxUrl,
    root,
    env: { NODE_V8_COVERAGE: coverage },
    nodeArgs: ['--require', join(ROOT, 'bench', 'coverage-window.cjs')],
  });
  try {
    const token = await createPartnerClient(`path-${pid}`, { ...ownerEnv(database), DATA_DIR: dataDir });
    const { balance } = await partnerRequests(url, token);
    const send = async () => {
      const answer = await fetch(`${url}${balance.path}`, { headers: balance.headers });
      await answer.arrayBuffer();
      if (answer.status !== 200) throw new Error(`${request}: ${answer.status}`);
    };
    for (let i = 0; i < WARM_UP; i++) await send();
    let seen = readdirSync(coverage).length;
    let common;
    for (let window = 0; window < WINDOWS; window++) {
      process.kill(pid, 'SIGUSR2');
      ({ files: seen } = await nextCoverage(coverage, seen));
      await send();
      // The answer's tail: its log line, written as the answer leaves.
      await pause(20);
      process.kill(pid, 'SIGUSR2');
      const written = await nextCoverage(coverage, seen);
      seen = written.files;
      const called = await calledFiles(join(coverage, written.newest), root);
      common = common ? new Set([...common].filter((file) => called.has(file))) : called;
    }
    return [...common].sort();
  } finally {
    await gateway.stop();
  }
}

export async function requestPath({ against }) {
  const log = (line) => process.stderr.write(`[bench] ${line}\n`);
  const database = await benchDatabase(log);
  const dataDir = scratchDir('pgw-bench-path-');
  const { sandbox, sandboxUrl } = await startBenchSandbox(dataDir);
  try {
    const builds = { 'this checkout': ROOT, ...(against ? { [against]: against } : {}) };
    const results = {};
    for (const [name, root] of Object.entries(builds)) results[name] = await measure(root, { database, dataDir, sandboxUrl, request: 'balance' });
    return results;
  } finally {
    await sandbox.stop();
    await database.stop();
  }
}

/** The files of each build, and how many, by folder. */
export function report(results) {
  const lines = [];
  for (const [name, files] of Object.entries(results)) {
    const byFolder = new Map();
    for (const file of files) {
      const folder = file.split('/').slice(0, -1).join('/');
      byFolder.set(folder, [...(byFolder.get(folder) ?? []), file.split('/').at(-1)]);
    }
    lines.push(`### A balance read: ${name}, ${files.length} source files`, '');
    lines.push(
      table(
        ['folder', 'files'],
        [...byFolder].map(([folder, names]) => [folder, names.join(', ')]),
      ),
      '',
    );
  }
  return lines.join('\n');
}
