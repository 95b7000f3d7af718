import { spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The pid and port of a server already running on `clusterDir`, from its postmaster.pid. */
export function runningServer(clusterDir: string): { pid: number; port: number } | undefined {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  let lines: string[];
  try {
    lines = readFileSync(pidFile, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  // A fresh postmaster.pid may not carry the port yet, and "ready" is its 8th line.
  if (!Number.isInteger(pid) || !Number.isInteger(port) || (lines[7] ?? '').trim() !== 'ready') return undefined;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return { pid, port };
}

/** A PostgreSQL server this process started. */
export interface Postmaster {
  readonly pid: number;
  /** Fast shutdown (SIGINT: sessions are ended, everything committed is kept); resolves once it has exited. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;

/**
 * Starts PostgreSQL on `clusterDir` in a process group (and session) of its own. A Ctrl-C at a
 * terminal sends SIGINT to the whole foreground group: in the service's group, the server would
 * stop at once, before the service's last writes (the final seal). Apart, only the service hears
 * it, and stops the server itself when it is done. Resolves once postmaster.pid says ready.
 */
export async function startPostmaster(options: {
  readonly binary: string;
  readonly clusterDir: string;
  readonly port: number;
  readonly flags: readonly string[];
  /** As root, the user the server runs as. */
  readonly owner?: { readonly uid: number; readonly gid: number };
  readonly onLog: (line: string) => void;
}): Promise<Postmaster> {
  try {
    accessSync(options.binary, constants.X_OK);
  } catch {
    chmodSync(options.binary, 0o755);
  }
  const child = spawn(options.binary, ['-D', options.clusterDir, '-p', String(options.port), ...options.flags], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    // Untranslated messages, whatever the machine's language.
    env: { ...process.env, LC_MESSAGES: 'C' },
    ...(options.owner ? { uid: options.owner.uid, gid: options.owner.gid } : {}),
  });
  const recent: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n').filter((text) => text.trim() !== '')) {
      options.onLog(line);
      recent.push(line);
      if (recent.length > 20) recent.shift();
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', (error) => recent.push(String(error)));
  const { pid } = child;
  if (pid === undefined) throw new Error(`the server could not be started: ${options.binary}`);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (runningServer(options.clusterDir)?.pid !== pid) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited during start-up: ${recent.join(' | ') || 'no output'}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGQUIT');
      throw new Error(`the server was not ready within ${READY_TIMEOUT_MS / 1000} s: ${recent.join(' | ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    pid,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}
