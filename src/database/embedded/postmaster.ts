import { existsSync, readFileSync } from 'node:fs';
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
