import { randomBytes } from 'node:crypto';
import { createSandboxServer } from './sandbox.server';
import { loadOrCreateSandboxKeys, SandboxKeys } from './sandbox-keys';

export interface RunningSandbox {
  readonly baseUrl: string;
  readonly bearerToken: string;
  readonly publicKeyPem: string;
  close(): Promise<void>;
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
}): Promise<RunningSandbox> {
  const keys = 'dir' in options.keys ? loadOrCreateSandboxKeys(options.keys.dir) : options.keys;
  const bearerToken = options.bearerToken ?? generateSandboxToken();
  const server = await createSandboxServer({ bearerToken, privateKey: keys.privateKey, publicKeyPem: keys.publicKeyPem, now: options.now, journalLimit: options.journalLimit });
  const host = options.host ?? '127.0.0.1';
  try {
    await server.listen({ port: options.port, host });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`The sandbox cannot listen on ${host}:${options.port}: the port is taken. Set SANDBOX_PORT (0 for any free port).`, { cause: error });
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
