import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, removeDataDir, scratchDataDir, Started, waitForOutput } from '../support/processes';

/**
 * The README's shell examples, run as written: `npm start` on a fresh DATA_DIR, then each block
 * with only its placeholders filled in (the printed tokens, the demo customer, an error.id, a
 * reference, a log file). Every `curl` answers the status its comment names (`# 404`, `# 403
 * AUTH.INSUFFICIENT_SCOPE`, `# {"status":201,…`) or, where none is named, a 2xx; every command
 * exits 0. The two live-mode starts run against `npm run sandbox` and the embedded database.
 */
const README = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
const BLOCKS = [...README.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((match) => match[1]);

/** A block's `curl` calls in order: the status and error code its comment expects, if it names one. */
interface Expected {
  readonly status?: number;
  readonly code?: string;
}

function expectationsOf(block: string): Expected[] {
  const lines = block.split('\n');
  const expected: Expected[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith('#') || !/(^|\s|\$\()curl\s/.test(lines[i])) continue;
    // The command ends on the first line outside a quote that does not continue with `\`.
    let end = i;
    let quotes = 0;
    for (; end < lines.length; end++) {
      quotes += (lines[end].split('#')[0].match(/'/g) ?? []).length;
      if (quotes % 2 === 0 && !lines[end].trimEnd().endsWith('\\')) break;
    }
    const said =
      /\s#\s+(\d{3})(?:\s+([A-Z_]+\.[A-Z_]+))?/.exec(lines[end]) ?? /^#\s+(?:\{"status":)?(\d{3})(?:\s+([A-Z_]+\.[A-Z_]+))?/.exec(lines[end + 1] ?? '');
    expected.push(said ? { status: Number(said[1]), code: said[2] } : {});
    i = end;
  }
  return expected;
}

/** `curl` as each block calls it, also writing each answer's status and body (one line) to $CALLS. */
const CURL_RECORDING = `
curl() {
  local out; out=$(command curl -w '\\n@@%{http_code}' "$@")
  local status=\${out##*@@}; local body=\${out%$'\\n'@@*}
  printf '%s\\n' "$body"
  printf '%s\\t%s\\n' "$status" "$(printf '%s' "$body" | tr -d '\\r\\n')" >> "$CALLS"
}
`;

interface Call {
  readonly status: number;
  readonly body: string;
}

function callsIn(file: string): Call[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => ({ status: Number(line.slice(0, line.indexOf('\t'))), body: line.slice(line.indexOf('\t') + 1) }));
}

/** The JSON envelope of an answer (after the headers, for `curl -si`). */
function envelopeOf(call: Call): { data?: unknown; error?: { code: string; id: string } | null } {
  return JSON.parse(call.body.slice(call.body.indexOf('{'))) as { data?: unknown; error?: { code: string; id: string } | null };
}

/** Runs `script` with bash (`set -euo pipefail`) from the project directory, in a process group of its own. */
function startBash(script: string, env: NodeJS.ProcessEnv): Started {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { env, cwd: process.cwd(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  // Once every process of the group that holds its output has ended, not only bash.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function runBash(script: string, env: NodeJS.ProcessEnv, timeoutMs = 90_000): Promise<{ code: number | null; output: string }> {
  const started = startBash(script, env);
  const timer = setTimeout(() => stopGroup(started, 'SIGKILL'), timeoutMs);
  const code = await started.exited;
  clearTimeout(timer);
  return { code, output: started.output() };
}

function stopGroup(started: Started, signal: NodeJS.Signals): void {
  try {
    process.kill(-started.child.pid!, signal);
  } catch {
    // already gone
  }
}

/** The line a service says it listens with, and where. */
const LISTENING = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"Partner gateway listening"/;

/**
 * A block that ends in `npm start`: started, listening and ready, then stopped as a terminal's
 * Ctrl-C stops it (the signal to the whole group: npm ends at once, the service when it has stopped).
 */
async function startsAndStops(script: string, env: NodeJS.ProcessEnv, says: string): Promise<{ ready: number; stopped: boolean; output: string }> {
  const started = startBash(script, env);
  try {
    const [, url] = await waitForOutput(started, LISTENING, 120_000);
    const ready = (await fetch(`${url}/health/ready`)).status;
    await waitForOutput(started, new RegExp(says), 5_000);
    stopGroup(started, 'SIGINT');
    await started.exited;
    return { ready, stopped: started.output().includes('"msg":"Stopped"'), output: started.output() };
  } finally {
    stopGroup(started, 'SIGKILL');
  }
}

describe('the README, run as written', () => {
  let dataDir: string;
  let liveDataDir: string;
  let service: Started;
  let env: NodeJS.ProcessEnv;
  let calls: string;
  let partner: string;
  let admin: string;
  let demo: string;
  let base: string;
  let errorId: string;
  let created: string;
  let databaseUrl: string;

  beforeAll(() => {
    dataDir = scratchDataDir();
    liveDataDir = scratchDataDir();
    calls = join(dataDir, 'calls.tsv');
  });
  afterAll(async () => {
    if (service) {
      stopGroup(service, 'SIGTERM');
      const timer = setTimeout(() => stopGroup(service, 'SIGKILL'), 20_000);
      await service.exited;
      clearTimeout(timer);
    }
    await removeDataDir(liveDataDir);
    await removeDataDir(dataDir);
  });

  /** A second gateway on the same database signs its checkpoints with the first one's key, as replicas do (docs/operations.md). */
  const oneSigningKey = () => ({ AUDIT_SIGNING_KEY: join(dataDir, 'audit-signing-key.pem') });

  /** Runs one block with the shell the earlier ones left (B, DATA_DIR and the development provider's port). */
  const run = async (index: number, fill: (text: string) => string) => {
    writeFileSync(calls, '');
    const result = await runBash(CURL_RECORDING + fill(BLOCKS[index]), env);
    const made = callsIn(calls);
    return { ...result, calls: made, expected: expectationsOf(BLOCKS[index]) };
  };
  const statusesOf = (made: Call[], expected: Expected[]) =>
    made.map((call, i) => ({
      status: expected[i]?.status === undefined && call.status >= 200 && call.status < 300 ? '2xx' : call.status,
      code: expected[i]?.code === undefined ? undefined : envelopeOf(call).error?.code,
    }));
  const wanted = (expected: Expected[]) => expected.map((e) => ({ status: e.status ?? '2xx', code: e.code }));

  it('holds twelve shell blocks, each run below (a new one fails here until this file runs it too)', () => {
    expect(BLOCKS).toHaveLength(12);
    expect(BLOCKS[0].trim()).toBe('npm ci && npm start');
    expect(BLOCKS[1].trim()).toBe('npm ci && npm test');
    // The second is what CI runs: .ci/run installs with `npm ci` and runs `npm test`.
    expect(readFileSync(join(process.cwd(), '.ci', 'run'), 'utf8')).toMatch(/^npm ci\b[\s\S]*^bounded \d+ npm test$/m);
  });

  it('`npm start` on a fresh DATA_DIR serves in sandbox mode and prints the tokens and the demo customer', async () => {
    // `npm ci` is what this suite's own run did first.
    service = startBash(
      BLOCKS[0].replace('npm ci && ', ''),
      cleanEnv({ DATA_DIR: dataDir, PORT: '0', SANDBOX_PORT: '0', DEV_OIDC_PORT: '0', DEV_STAFF_OIDC_PORT: '0', AUDIT_SEAL_MAX_LAG_SECONDS: '5' }),
    );
    const [, url] = await waitForOutput(service, LISTENING, 120_000);
    base = url;
    partner = /partner\s+(pgw_[A-Za-z0-9_-]+)/.exec(service.output())![1];
    admin = /admin\s+(pgw_[A-Za-z0-9_-]+)/.exec(service.output())![1];
    demo = /Demo customer: ([0-9a-f-]{36})/.exec(service.output())![1];
    const issuer = new URL(/"issuer":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(service.output())![1]);
    const staffIssuer = new URL(/"issuer":"(http:\/\/127\.0\.0\.1:\d+)","msg":"Development staff provider/.exec(service.output())![1]);
    env = cleanEnv({ B: base, DATA_DIR: dataDir, DEV_OIDC_PORT: issuer.port, DEV_STAFF_OIDC_PORT: staffIssuer.port, CALLS: calls });

    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
  }, 150_000);

  it('the first steps: a customer, its replay, a balance and an EUR account', async () => {
    const result = await run(2, (text) => text.replace('<partner token>', partner).replace('http://127.0.0.1:3000', base).replaceAll('<id>', demo));

    expect({ code: result.code, output: result.code === 0 ? '' : result.output }).toEqual({ code: 0, output: '' });
    expect(statusesOf(result.calls, result.expected)).toEqual(wanted(result.expected));
    expect(result.calls).toHaveLength(4);
    expect(result.output).toMatch(/^idempotent-replayed: true/im);
    created = (envelopeOf(result.calls[0]).data as { customer_id: string }).customer_id;
  }, 120_000);

  it('end users: demo reaches the demo customer, alex does not, and a narrower scope is 403', async () => {
    const result = await run(3, (text) => text.replaceAll('<the demo customer>', demo));

    expect({ code: result.code, output: result.code === 0 ? '' : result.output }).toEqual({ code: 0, output: '' });
    expect(result.expected.map((e) => e.status)).toEqual([200, 200, 404, 403]);
    expect(statusesOf(result.calls, result.expected)).toEqual(wanted(result.expected));
    errorId = envelopeOf(result.calls[2]).error!.id;
  }, 120_000);

  it('DPoP: the bound token with its proof is 200, without one 401 AUTH.DPOP_REQUIRED', async () => {
    const result = await run(4, (text) => text.replaceAll('./.data/', `${dataDir}/`).replaceAll('.data/', `${dataDir}/`));

    expect({ code: result.code, output: result.code === 0 ? '' : result.output }).toEqual({ code: 0, output: '' });
    expect(result.expected).toEqual([{ status: 200 }, { status: 401, code: 'AUTH.DPOP_REQUIRED' }]);
    expect(statusesOf(result.calls, result.expected)).toEqual(wanted(result.expected));
  }, 120_000);

  it('when something fails: the error’s request_log_url, followed with the partner token, is the request’s timeline; its error.id finds it too', async () => {
    const result = await run(5, (text) => `P=${partner}\n${text}`);

    expect({ code: result.code, output: result.code === 0 ? '' : result.output }).toEqual({ code: 0, output: '' });
    expect(result.expected.map((e) => e.status)).toEqual([400, 200, undefined, undefined]);
    expect(statusesOf(result.calls, result.expected)).toEqual(wanted(result.expected));
    const refused = envelopeOf(result.calls[0]).error!;
    expect(envelopeOf(result.calls[1]).data).toMatchObject({ outcome: 'rejected', status: 400, error: { code: 'REQUEST.VALIDATION_FAILED', id: refused.id } });
    expect((envelopeOf(result.calls[2]).data as { requests: { error: { id: string } }[] }).requests.map((request) => request.error.id)).toEqual([refused.id]);
  }, 120_000);

  it('the audit log: a staff member finds it by error.id and by reference, with a reason (without one, 400)', async () => {
    const reference = /"reference":"([0-9a-f-]{36})"/.exec(BLOCKS[2])![1];
    const result = await run(6, (text) => text.replace('<error.id from a screenshot>', errorId).replaceAll('<uuid>', reference));

    expect({ code: result.code, output: result.code === 0 ? '' : result.output }).toEqual({ code: 0, output: '' });
    expect(statusesOf(result.calls, result.expected)).toEqual(wanted(result.expected));
    expect(result.calls[0].body).toContain(errorId);
    expect(result.calls[1].body).toContain(created);
  }, 120_000);

  it('verifying the audit log: whole, by period, against the checkpoints in the log, and the checkpoints served', async () => {
    await waitForOutput(service, /"msg":"Audit checkpoint"/, 30_000);
    const log = join(dataDir, 'service.log');
    writeFileSync(log, service.output());
    const result = await run(7, (text) => text.replace('service.log', log).replaceAll('<admin token>', admin));

    expect({ code: result.code, output: result.code === 0 ? '' : result.output }).toEqual({ code: 0, output: '' });
    expect(result.output).toContain('"status":"intact"');
    expect(statusesOf(result.calls, result.expected)).toEqual(wanted(result.expected));
  }, 120_000);

  it('reconciliation and the unresolved calls', async () => {
    const result = await run(8, (text) => text.replaceAll('<admin token>', admin));

    expect({ code: result.code, output: result.code === 0 ? '' : result.output }).toEqual({ code: 0, output: '' });
    expect(statusesOf(result.calls, result.expected)).toEqual(wanted(result.expected));
    expect(result.calls).toHaveLength(1);
  }, 120_000);

  it('client tokens: created with the optional arguments given, listed, revoked; a customer linked to the new tenant', async () => {
    const elsewhere = randomUUID();
    const result = await run(10, (text) => text.replace(/\[(--[^\]]+)\]/g, '$1').replace('<uuid>', elsewhere));

    expect({ code: result.code, output: result.code === 0 ? '' : result.output }).toEqual({ code: 0, output: '' });
    expect(result.output).toContain('"name":"acme-backend"');
    expect(result.output).toContain('"tenant":"acme"');
    expect(result.output).toContain(elsewhere);
  }, 120_000);

  it('an external PostgreSQL: `DATABASE_URL=… npm start` serves in sandbox mode on it, and stops on SIGTERM', async () => {
    const credentials = JSON.parse(readFileSync(join(dataDir, 'embedded-postgres.json'), 'utf8')) as Record<string, string>;
    const port = /"msg":"Database: embedded PostgreSQL started on 127\.0\.0\.1:(\d+)/.exec(service.output())![1];
    databaseUrl = `postgres://${encodeURIComponent(credentials.serviceUser)}:${encodeURIComponent(credentials.servicePassword)}@127.0.0.1:${port}/${credentials.database}`;
    const result = await startsAndStops(
      BLOCKS[11].replace(/postgres:\/\/\S+/, databaseUrl),
      cleanEnv({ DATA_DIR: liveDataDir, PORT: '0', SANDBOX_PORT: '0', DEV_OIDC_PORT: '0', DEV_STAFF_OIDC_PORT: '0', ...oneSigningKey() }),
      'SANDBOX MODE',
    );

    expect({ ready: result.ready, stopped: result.stopped }).toEqual({ ready: 200, stopped: true });
    expect(result.output).not.toContain('DEVELOPMENT CLIENT TOKENS');
  }, 150_000);

  it('live mode: the README start with `npm run sandbox`’s provider details and that database serves in live mode', async () => {
    const sandbox = startBash('npm run -s sandbox', cleanEnv({ DATA_DIR: liveDataDir, SANDBOX_PORT: '0' }));
    try {
      const [, printed] = await waitForOutput(sandbox, /(UPSTREAM_BASE_URL=[\s\S]*?)PORT=3001 npm start/, 60_000);
      const value = (name: string) => new RegExp(`${name}=(\\S+)`).exec(printed)![1];
      const script = BLOCKS[9]
        .replace('https://provider.example', value('UPSTREAM_BASE_URL'))
        .replace('UPSTREAM_BEARER_TOKEN=...', `UPSTREAM_BEARER_TOKEN=${value('UPSTREAM_BEARER_TOKEN')}`)
        .replace('/run/secrets/provider.pem', value('UPSTREAM_PUBLIC_KEY'))
        .replace(/postgres:\/\/\S+/, databaseUrl);
      const result = await startsAndStops(script, cleanEnv({ DATA_DIR: liveDataDir, PORT: '0', ...oneSigningKey() }), 'Live mode');

      expect({ ready: result.ready, stopped: result.stopped }).toEqual({ ready: 200, stopped: true });
      expect(result.output).not.toContain('SANDBOX MODE');
    } finally {
      stopGroup(sandbox, 'SIGTERM');
      await sandbox.exited;
    }
  }, 150_000);
});
