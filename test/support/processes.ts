import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The environment a new user has: none of the service's variables, and no DATABASE_URL. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LANG: process.env.LANG ?? 'C.UTF-8', ...extra };
}

/** A scratch DATA_DIR the `postgres` user can reach (tests run as root on CI machines). */
export function scratchDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgw-data-'));
  chmodSync(dir, 0o755);
  return dir;
}

export { freePort } from '../../src/common/runtime/free-port';

export interface Started {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/**
 * The port a started service printed in a JSON log line: the URL in `field` of the line whose
 * message is `message` ("Partner gateway listening" → url, "Sandbox provider running…" → sandbox).
 * Services in tests listen on port 0 and say where they are: a port picked beforehand and left
 * unbound until the service starts could be handed meanwhile to the embedded PostgreSQL.
 */
export function portPrinted(started: Started, message: string, field: string): number {
  for (const line of started.output().split('\n')) {
    if (!line.startsWith('{') || !line.includes(message)) continue;
    const url = (JSON.parse(line) as Record<string, unknown>)[field];
    if (typeof url === 'string') return Number(new URL(url).port);
  }
  throw new Error(`no "${message}" line with ${field} in:\n${started.output()}`);
}

/** Where a service started in sandbox mode listens, and its in-process sandbox: once it has said it listens. */
export function listeningPorts(started: Started): { port: number; sandboxPort: number } {
  return { port: portPrinted(started, 'Partner gateway listening', 'url'), sandboxPort: portPrinted(started, 'Sandbox provider running', 'sandbox') };
}

/**
 * A command of dist/src/ as `npm run` starts it in a checkout: with development tooling's embedded
 * PostgreSQL offered for when DATABASE_URL is not set (scripts/local-database.cjs).
 */
export function asNpmRunsIt(script: string): readonly string[] {
  return ['--require', join(process.cwd(), 'scripts', 'local-database.cjs'), script];
}

export function startProcess(script: string | readonly string[], args: string[], env: NodeJS.ProcessEnv): Started {
  const child = spawn(process.execPath, [...[script].flat(), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/**
 * Runs a script with its stdout and stderr on a terminal (a pseudo-terminal made by util-linux's
 * `script`), as a developer runs `npm start`. The service is `script`'s one child process.
 */
export function startInTerminal(script: string, env: NodeJS.ProcessEnv): Started {
  const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const child = spawn('script', ['-qefc', `exec ${quoted(process.execPath)} ${quoted(script)}`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/**
 * Runs a script to completion and returns its exit code and separate streams. A script still
 * running after `timeoutMs` is killed (code null): a command that should have ended but did not
 * fails its test instead of holding the whole suite open.
 */
export async function runProcess(script: string | readonly string[], args: string[], env: NodeJS.ProcessEnv, { timeoutMs = 60_000 } = {}) {
  const child = spawn(process.execPath, [...[script].flat(), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export async function waitForOutput(started: Started, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() <= deadline) {
    const match = started.output().match(pattern);
    if (match) return match;
    if (started.child.exitCode !== null) throw new Error(`process exited (${started.child.exitCode}):\n${started.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${pattern}:\n${started.output()}`);
}

/** The pid of the embedded PostgreSQL running on `dataDir`, if one is. */
export function clusterPid(dataDir: string): number | undefined {
  const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
  return existsSync(pidFile) ? Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0], 10) : undefined;
}

/** Stops an embedded PostgreSQL a test left behind, and removes its scratch DATA_DIR. */
export async function removeDataDir(dataDir: string): Promise<void> {
  const pid = clusterPid(dataDir);
  if (pid) {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // not running
    }
  }
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
}
