import type { DemoResources } from '../../src/swagger';
import type { FastifyInstance } from 'fastify';
import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { ClientRole } from '../../src/common/domain/request-record';
import { ApiClientsService } from '../../src/auth/domain/api-clients.service';
import { withApiClientsAsOwner } from '../../src/auth/persistence/api-clients-as-owner';
import { createApp } from '../../src/bootstrap';
import { DevelopmentProviders, GatewayConfig } from '../../src/config/gateway-config';
import { validateEnvironment } from '../../src/config/load-config';
import { PostgresNotifications } from '../../src/database/postgres-notifications';
import { createTestDatabase, TestDatabase } from './database';
import { waitFor } from './wait-for';
import { generateSandboxKeys, SandboxKeys } from '../../dev/sandbox/sandbox-keys';
import { RunningSandbox, startSandbox } from '../../dev/sandbox/sandbox.runner';
import { liveUpstreamSettings } from '../../src/upstream/upstream.settings';

/** What the service logged since a point, as raw text and parsed lines. */
export interface CapturedLogs {
  readonly text: string;
  readonly lines: Record<string, unknown>[];
}

/**
 * One capture per test file (Jest gives each file its own modules): every application the file
 * starts logs into it, and each application reads from where it started.
 */
class LogCapture extends Writable {
  private readonly chunks: string[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.chunks.push(chunk.toString('utf8'));
    done();
  }

  since(start = this.chunks.length): CapturedLogs {
    const chunks = this.chunks;
    return {
      get text() {
        return chunks.slice(start).join('');
      },
      get lines() {
        return this.text
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      },
    };
  }
}

const capture = new LogCapture();

export interface TestApp {
  readonly app: NestFastifyApplication;
  /** The provider's stand-in this application talks to over loopback. */
  readonly sandbox: RunningSandbox;
  readonly baseUrl: string;
  readonly database: TestDatabase;
  /** The application's own, connected as the service's role (DATABASE_URL). */
  readonly dataSource: DataSource;
  readonly logs: CapturedLogs;
  /** Runs SQL as the schema's owner (a superuser here): what the service's role may not do. */
  asOwner<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Creates a client straight through the domain service and returns its token. */
  createClient(role: ClientRole, overrides?: { name?: string; tenant?: string; expiresAt?: Date | null }): Promise<string>;
  close(): Promise<void>;
}

let counter = 0;

let keys: SandboxKeys | undefined;

/** One audit signing key per test file, as replicas share one (AUDIT_SIGNING_KEY). */
export const TEST_AUDIT_SIGNING_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/**
 * The real application — same module, adapter, pipe, filter and migrations as production — on a
 * fresh database of its own, listening on a random loopback port, in live mode against a sandbox
 * of its own (also on loopback), exactly as it would talk to the provider.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  /** `oneRole`: DATABASE_URL alone, whose role (the owner) then owns the audit log, as an operator who set no MIGRATIONS_DATABASE_URL. */
  options: {
    database?: TestDatabase;
    oneRole?: boolean;
    demo?: () => DemoResources | undefined;
    development?: DevelopmentProviders;
    routes?: (fastify: FastifyInstance) => void;
  } = {},
): Promise<TestApp> {
  keys ??= generateSandboxKeys();
  const sandbox = await startSandbox({ port: 0, keys });
  const database = options.database ?? (await createTestDatabase());
  const config = validateEnvironment({
    LOG_LEVEL: 'info',
    NODE_ENV: 'test',
    UPSTREAM_BEARER_TOKEN: sandbox.bearerToken,
    UPSTREAM_PUBLIC_KEY: sandbox.publicKeyPem,
    AUDIT_SIGNING_KEY: TEST_AUDIT_SIGNING_KEY,
    ...env,
    UPSTREAM_BASE_URL: sandbox.baseUrl,
    DATABASE_URL: options.oneRole ? database.ownerUrl : database.url,
    ...(options.oneRole ? {} : { MIGRATIONS_DATABASE_URL: database.ownerUrl }),
  });
  const logs = capture.since();
  let app: NestFastifyApplication;
  try {
    app = await createApp(
      new GatewayConfig(config, options.development),
      { url: config.DATABASE_URL!, ownerUrl: config.MIGRATIONS_DATABASE_URL },
      liveUpstreamSettings(config),
      {
        logStream: capture,
        demo: options.demo,
        routes: options.routes,
      },
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (error) {
    await sandbox.close();
    if (!options.database) await database.drop();
    throw error;
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const clients = app.get(ApiClientsService);
  const notifications = app.get(PostgresNotifications);
  return {
    app,
    sandbox,
    baseUrl: `http://127.0.0.1:${port}`,
    database,
    dataSource: app.get(DataSource),
    logs,
    async asOwner<T>(sql: string, params: unknown[] = []) {
      const client = new Client({ connectionString: database.ownerUrl });
      await client.connect();
      try {
        return (await client.query(sql, params)).rows as T[];
      } finally {
        await client.end();
      }
    },
    async createClient(role, overrides = {}) {
      const heard = clients.changesHeard;
      // As npm run clients does: the service's role only reads clients.
      const { token } = await withApiClientsAsOwner({ url: database.url, ownerUrl: database.ownerUrl }, (owner) =>
        owner.create({
          name: overrides.name ?? `${role}-${++counter}-${process.pid}`,
          role,
          tenant: overrides.tenant ?? 'default',
          expiresAt: overrides.expiresAt ?? null,
        }),
      );
      // The creation's own announcement makes the instance forget every client it remembers. Arriving
      // after the test's next request, it would undo what that request remembered: wait for it here.
      if (notifications.live) await waitFor(() => clients.changesHeard > heard, { timeoutMs: 5000, what: 'the new client to be announced' });
      return token;
    },
    async close() {
      await app.close();
      await sandbox.close();
      // A database given to it is its maker's to drop: another app may still be using it.
      if (!options.database) await database.drop();
    },
  };
}
