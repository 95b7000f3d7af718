import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { generateSandboxKeys } from '../../src/sandbox/sandbox-keys';
import { RunningSandbox, startSandbox } from '../../src/sandbox/sandbox.runner';
import { createTestDatabase, TestDatabase } from '../support/database';
import { podOf, renderedManifests } from '../support/kubernetes';
import { cleanEnv, portPrinted, removeDataDir, runProcess, scratchDataDir, startProcess, Started, waitForOutput } from '../support/processes';

/**
 * The pod of deploy/kubernetes as the kubelet would run it, without a cluster: the init container's
 * command with the init container's environment, then the gateway container with the ConfigMap and
 * the service's Secret (and nothing else), on a real PostgreSQL with its two roles. Only what a
 * cluster would differ in is replaced: the addresses (the sandbox for the provider, the test
 * database) and the port.
 */
const objects = renderedManifests().base;
const pod = podOf(objects);
const configMap = objects.find((object) => object.kind === 'ConfigMap')!.data!;

describe('the Kubernetes pod, run as its manifests say', () => {
  let database: TestDatabase;
  let sandbox: RunningSandbox;
  let gateway: Started | undefined;
  const dataDir = scratchDataDir();

  beforeAll(async () => {
    database = await createTestDatabase();
    sandbox = await startSandbox({ port: 0, keys: generateSandboxKeys() });
  });
  afterAll(async () => {
    gateway?.child.kill('SIGKILL');
    await gateway?.exited;
    await sandbox?.close();
    await database?.drop();
    await removeDataDir(dataDir);
  });

  /** What the cluster's Secrets hold, here: the test database's two roles and keys of the test's own. */
  const secretValue = (name: string, key: string): string => {
    const values: Record<string, Record<string, string>> = {
      'partner-gateway': {
        DATABASE_URL: database.url,
        UPSTREAM_BEARER_TOKEN: sandbox.bearerToken,
        UPSTREAM_PUBLIC_KEY: sandbox.publicKeyPem,
        AUDIT_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
        END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
      },
      'partner-gateway-migrations': { MIGRATIONS_DATABASE_URL: database.ownerUrl },
    };
    const value = values[name]?.[key];
    if (value === undefined) throw new Error(`no test value for secret ${name} key ${key}`);
    return value;
  };

  it('when the init container runs, then the migrations apply as the owner and grant the service its role', async () => {
    const [migrate] = pod.initContainers;
    const command = migrate.command ?? [];
    const env = Object.fromEntries(
      (migrate.env ?? []).map((variable) => [
        variable.name,
        variable.value ?? secretValue(variable.valueFrom!.secretKeyRef!.name, variable.valueFrom!.secretKeyRef!.key),
      ]),
    );
    expect(command.slice(0, 1)).toEqual(['node']);

    const result = await runProcess(join(process.cwd(), command[1]), command.slice(2), cleanEnv(env));

    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/Applied: /);
  });

  it('when the gateway container starts after it, with the ConfigMap and its Secret only, then it is ready and its audit log is protected from its own role', async () => {
    const [container] = pod.containers;
    expect(container.command).toBeUndefined();
    const env = {
      ...configMap,
      // The service's Secret (envFrom): every key but the Redis URL, set only where a Redis answers.
      ...Object.fromEntries(
        ['DATABASE_URL', 'UPSTREAM_BEARER_TOKEN', 'UPSTREAM_PUBLIC_KEY', 'AUDIT_SIGNING_KEY', 'END_USER_PSEUDONYM_KEY'].map((key) => [
          key,
          secretValue('partner-gateway', key),
        ]),
      ),
      ...(process.env.TEST_REDIS_URL ? { RATE_LIMIT_REDIS_URL: process.env.TEST_REDIS_URL } : {}),
      // What a cluster has and this machine does not: the provider's address, no OpenID provider to reach, a free port, a data directory.
      UPSTREAM_BASE_URL: sandbox.baseUrl,
      OIDC_ISSUER: '',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
    };
    gateway = startProcess(join(process.cwd(), 'dist', 'src', 'main.js'), [], cleanEnv(env));
    await waitForOutput(gateway, /Partner gateway listening/);
    const base = `http://127.0.0.1:${portPrinted(gateway, 'Partner gateway listening', 'url')}`;

    const ready = await fetch(`${base}/health/ready`);
    const body = (await ready.json()) as { data: { details: { auditLog: { protected: boolean } } } };

    expect(ready.status).toBe(200);
    expect(body.data.details.auditLog.protected).toBe(true);
  });
});
