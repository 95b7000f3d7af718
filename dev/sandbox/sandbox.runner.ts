import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createSandboxServer } from './sandbox.server';
import { loadOrCreateSandboxKeys, SandboxKeys } from './sandbox-keys';
import { SandboxState } from './sandbox-state';

export interface RunningSandbox {
  readonly baseUrl: string;
  readonly bearerToken: string;
  readonly publicKeyPem: string;
  close(): Promise<void>;
}

/** The one start-up failure a developer meets: another sandbox (or a gateway in sandbox mode) runs. */
export class SandboxPortTaken extends Error {
  constructor(host: string, port: number, cause: unknown) {
    super(
      `The sandbox cannot listen on ${host}:${port}: the port is taken (is a gateway in sandbox mode or another sandbox running?). Set SANDBOX_PORT (0 for any free port).`,
      { cause },
    );
    this.name = 'SandboxPortTaken';
  }
}

/** Where a sandbox keeps its keys and what it made, under DATA_DIR. */
export function sandboxFilesUnder(dataDir: string): { keysDir: string; stateFile: string } {
  return { keysDir: join(dataDir, 'sandbox'), stateFile: join(dataDir, 'sandbox', 'state.jsonl') };
}

export function generateSandboxToken(): string {
  return `sbx_${randomBytes(24).toString('base64url')}`;
}

/** Starts the sandbox on 127.0.0.1, or `host` (port 0: any free port). */
export async function startSandbox(options: {
  port: number;
  /** Where to listen; loopback unless the sandbox runs on its own (a container of its own). */
  host?: string;
  keys: SandboxKeys | { dir: string };
  bearerToken?: string;
  now?: () => Date;
  journalLimit?: number;
  /** Where its customers, accounts and references are kept across restarts; in memory when unset. */
  stateFile?: string;
}): Promise<RunningSandbox> {
  const keys = 'dir' in options.keys ? loadOrCreateSandboxKeys(options.keys.dir) : options.keys;
  const bearerToken = options.bearerToken ?? generateSandboxToken();
  const state = options.stateFile ? SandboxState.kept(options.stateFile) : SandboxState.inMemory();
  const server = await createSandboxServer({
    bearerToken,
    privateKey: keys.privateKey,
    publicKeyPem: keys.publicKeyPem,
    now: options.now,
    journalLimit: options.journalLimit,
    state,
  });
  const host = options.host ?? '127.0.0.1';
  try {
    await server.listen({ port: options.port, host });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new SandboxPortTaken(host, options.port, error);
    }
    throw error;
  }
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    baseUrl: `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`,
    bearerToken,
    publicKeyPem: keys.publicKeyPem,
    close: () => server.close(),
  };
}

/**
 * A gateway start in live mode against this sandbox, complete: live mode needs an external
 * PostgreSQL too. A DATABASE_URL already set (environment or .env) is used as is, never printed.
 */
export function liveModeStart(baseUrl: string, bearerToken: string, publicKeyPath: string, databaseUrl: string | undefined): string {
  return [
    '',
    'Start a gateway in live mode against this sandbox (in another terminal, from the project directory):',
    '',
    `  UPSTREAM_BASE_URL=${baseUrl} \\`,
    `  UPSTREAM_BEARER_TOKEN=${bearerToken} \\`,
    `  UPSTREAM_PUBLIC_KEY=${publicKeyPath} \\`,
    ...(databaseUrl ? [] : ['  DATABASE_URL=postgres://USER:PASSWORD@127.0.0.1:5432/partner_gateway \\']),
    '  PORT=3001 npm start',
    '',
    databaseUrl
      ? 'DATABASE_URL is already set (environment or .env): the gateway uses it.'
      : 'Live mode needs an external PostgreSQL: put yours in DATABASE_URL (the embedded one is for sandbox mode).',
    'PORT=3001 leaves 3000 to a gateway in sandbox mode. Client tokens: npm run clients -- create --name app --role partner',
    '',
  ].join('\n');
}
