import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSandboxKeys } from '../../dev/sandbox/sandbox-keys';
import { RunningSandbox, startSandbox } from '../../dev/sandbox/sandbox.runner';
import { createTestDatabase, TestDatabase } from '../support/database';
import { Container, podOf, renderedManifests } from '../support/kubernetes';
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
    rmSync(keysDir, { recursive: true, force: true });
    gateway?.child.kill('SIGKILL');
    await gateway?.exited;
    await sandbox?.close();
    await database?.drop();
    await removeDataDir(dataDir);
  });

  /** What the cluster's Secrets hold, here: the test database's two roles, the sandbox's token and key, keys of the test's own. */
  const secrets = (): Record<string, Record<string, string>> => ({
    'partner-gateway': {
      DATABASE_URL: database.url,
      UPSTREAM_BEARER_TOKEN: sandbox.bearerToken,
      ...(process.env.TEST_REDIS_URL ? { RATE_LIMIT_REDIS_URL: process.env.TEST_REDIS_URL } : {}),
      'upstream-public-key.pem': sandbox.publicKeyPem,
      'audit-signing-key.pem': auditKey,
      'end-user-pseudonym.key': randomBytes(32).toString('base64'),
      'session.key': randomBytes(32).toString('base64'),
      'data.key': randomBytes(32).toString('base64'),
      'metrics-token': randomBytes(32).toString('base64url'),
    },
    'partner-gateway-migrations': { MIGRATIONS_DATABASE_URL: database.ownerUrl },
  });
  const auditKey = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const keysDir = mkdtempSync(join(tmpdir(), 'pod-keys-'));

  /**
   * A container's environment as the kubelet makes it: the ConfigMap (envFrom), then its own
   * variables (a missing optional Secret key leaves the variable unset; any other is an error), with
   * the paths under a mounted Secret volume pointing at those files written here.
   */
  const environmentOf = (container: Container): Record<string, string> => {
    const held = secrets();
    const env: Record<string, string> = {};
    for (const source of container.envFrom ?? []) {
      if (source.configMapRef) Object.assign(env, configMap);
      if (source.secretRef) throw new Error(`${container.name} takes a whole Secret as variables (${source.secretRef.name}): keys belong in files`);
    }
    for (const variable of container.env ?? []) {
      const ref = variable.valueFrom?.secretKeyRef;
      if (!ref) {
        env[variable.name] = variable.value ?? '';
        continue;
      }
      const value = held[ref.name]?.[ref.key];
      if (value === undefined && !ref.optional && !(ref.key === 'RATE_LIMIT_REDIS_URL' && !process.env.TEST_REDIS_URL)) {
        throw new Error(`no test value for secret ${ref.name} key ${ref.key}`);
      }
      if (value !== undefined) env[variable.name] = value;
    }
    for (const mount of container.volumeMounts ?? []) {
      const volume = pod.volumes?.find((candidate) => candidate.name === mount.name);
      if (!volume?.secret) continue;
      const dir = join(keysDir, container.name, mount.name);
      mkdirSync(dir, { recursive: true });
      for (const item of volume.secret.items ?? []) {
        const value = held[volume.secret.secretName]?.[item.key];
        if (value === undefined) throw new Error(`no test value for secret ${volume.secret.secretName} key ${item.key}`);
        writeFileSync(join(dir, item.path), value);
      }
      for (const [name, value] of Object.entries(env)) {
        if (value.startsWith(`${mount.mountPath}/`)) env[name] = join(dir, value.slice(mount.mountPath.length + 1));
      }
    }
    return env;
  };

  it('when the init container runs, then the migrations apply as the owner and grant the service its role', async () => {
    const [migrate] = pod.initContainers;
    const command = migrate.command ?? [];
    expect(command.slice(0, 1)).toEqual(['node']);

    const result = await runProcess(join(process.cwd(), command[1]), command.slice(2), cleanEnv({ ...environmentOf(migrate), DATA_DIR: dataDir }));

    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/Applied: /);
  });

  it('when the gateway container starts after it, with the ConfigMap, its variables and its key files only, then it is ready and its audit log is protected from its own role', async () => {
    const [container] = pod.containers;
    expect(container.command).toBeUndefined();
    const env = {
      ...environmentOf(container),
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

    // An operator's admin client, made as npm run clients makes one: the readiness details are an admin's.
    const created = await runProcess(
      join(process.cwd(), 'dist', 'src', 'auth', 'cli', 'clients.cli.js'),
      ['create', '--name', 'operator', '--role', 'admin'],
      cleanEnv({ DATABASE_URL: database.url, MIGRATIONS_DATABASE_URL: database.ownerUrl, DATA_DIR: dataDir }),
    );
    const admin = (JSON.parse(created.stdout) as { token: string }).token;
    const ready = await fetch(`${base}/health/ready`);
    const details = await fetch(`${base}/health/details`, { headers: { authorization: `Bearer ${admin}` } });
    const body = (await details.json()) as { data: { details: { auditLog: { protected: boolean } } } };

    expect(ready.status).toBe(200);
    expect(details.status).toBe(200);
    expect(body.data.details.auditLog.protected).toBe(true);
  });
});
