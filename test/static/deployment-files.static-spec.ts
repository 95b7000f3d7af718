import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { knownVariables, validateEnvironment } from '../../src/config/load-config';
import { generateSandboxKeys } from '../../src/sandbox/sandbox-keys';

// No Docker engine runs where the suite runs: these checks read the files the way compose and
// docker would, and hold them to the service's own configuration schema.

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: string[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
}

const compose = parse(readFileSync(join(process.cwd(), 'docker-compose.yml'), 'utf8')) as ComposeFile;
const dockerfile = readFileSync(join(process.cwd(), 'Dockerfile'), 'utf8');

/** `${NAME:-default}` as compose resolves it when NAME is not set. */
function withDefaults(environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).map(([key, value]) => [key, String(value).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
}

describe('docker-compose.yml', () => {
  it('when read, then it has postgres, the sandbox and the gateway, each with a health check', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['gateway', 'postgres', 'sandbox']);
    for (const service of Object.values(compose.services)) {
      expect(service.healthcheck?.test.length).toBeGreaterThan(1);
    }
  });

  it('when the gateway starts, then it waits for a healthy database and a healthy sandbox', () => {
    expect(compose.services.gateway.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      sandbox: { condition: 'service_healthy' },
    });
  });

  it('when data must outlive containers, then it sits in named volumes that are declared', () => {
    // A source starting with . or / is a bind mount of a file in the repository, not a volume.
    const named = (service: ComposeService) => (service.volumes ?? []).map((v) => v.split(':')[0]).filter((source) => !/^[./]/.test(source));

    expect(named(compose.services.postgres)).toContain('postgres-data');
    expect(compose.services.postgres.volumes).toContain('postgres-data:/var/lib/postgresql/data');
    for (const service of Object.values(compose.services)) {
      for (const volume of named(service)) expect(Object.keys(compose.volumes)).toContain(volume);
    }
  });

  it('when the gateway and sandbox environments are read, then every variable is one the config schema knows', () => {
    const known = new Set(knownVariables());
    for (const name of ['gateway', 'sandbox']) {
      const unknown = Object.keys(compose.services[name].environment ?? {}).filter((key) => !known.has(key));
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
    }
  });

  it('when the gateway environment is validated as the service would, then it is a complete live-mode configuration', () => {
    const env = withDefaults(compose.services.gateway.environment!);
    // The key file exists only inside the sandbox-keys volume; a real key stands in for it here.
    const dir = mkdtempSync(join(tmpdir(), 'pgw-compose-'));
    writeFileSync(join(dir, 'public.pem'), generateSandboxKeys().publicKeyPem);

    const config = validateEnvironment({ ...env, UPSTREAM_PUBLIC_KEY: join(dir, 'public.pem') });

    expect(config.UPSTREAM_BASE_URL).toBeDefined();
    expect(config.DATABASE_URL).toBeDefined();
    expect(config.HOST).toBe('0.0.0.0');
  });

  it('when the wiring is followed, then the gateway reaches postgres and the sandbox by service name with matching credentials', () => {
    const gateway = withDefaults(compose.services.gateway.environment!);
    const sandbox = withDefaults(compose.services.sandbox.environment!);
    const postgres = compose.services.postgres.environment!;
    const database = new URL(gateway.DATABASE_URL);
    const owner = new URL(gateway.MIGRATIONS_DATABASE_URL);
    const upstream = new URL(gateway.UPSTREAM_BASE_URL);
    // The service's own role comes from the init script the postgres service mounts.
    const [initDir, initMount] = compose.services.postgres.volumes!.find((v) => v.endsWith(':/docker-entrypoint-initdb.d:ro'))!.split(':');
    const initSql = readdirSync(join(process.cwd(), initDir))
      .map((file) => readFileSync(join(process.cwd(), initDir, file), 'utf8'))
      .join('\n');
    const [, serviceRole, servicePassword] = initSql.match(/CREATE ROLE (\w+) LOGIN PASSWORD '([^']+)'/)!;

    expect(initMount).toBe('/docker-entrypoint-initdb.d');
    expect(database.hostname).toBe('postgres');
    expect(decodeURIComponent(database.username)).toBe(serviceRole);
    expect(decodeURIComponent(database.password)).toBe(servicePassword);
    expect(database.pathname).toBe(`/${postgres.POSTGRES_DB}`);
    expect(owner.hostname).toBe('postgres');
    expect(decodeURIComponent(owner.username)).toBe(postgres.POSTGRES_USER);
    expect(decodeURIComponent(owner.password)).toBe(postgres.POSTGRES_PASSWORD);
    expect(owner.pathname).toBe(`/${postgres.POSTGRES_DB}`);
    expect(upstream.hostname).toBe('sandbox');
    expect(upstream.port).toBe(sandbox.SANDBOX_PORT);
    expect(sandbox.SANDBOX_HOST).toBe('0.0.0.0');
    expect(gateway.UPSTREAM_BEARER_TOKEN).toBe(sandbox.SANDBOX_BEARER_TOKEN);
    // The sandbox writes DATA_DIR/sandbox/public.pem into the volume the gateway mounts.
    const [volume, mountedAt] = compose.services.gateway.volumes!.find((v) => v.startsWith('sandbox-keys:'))!.split(':');
    const sandboxMount = compose.services.sandbox.volumes!.find((v) => v.startsWith(`${volume}:`))!.split(':')[1];
    expect(sandboxMount).toBe(sandbox.DATA_DIR);
    expect(gateway.UPSTREAM_PUBLIC_KEY).toBe(`${mountedAt}/sandbox/public.pem`);
  });
});

describe('Dockerfile', () => {
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const runtime = stages[stages.length - 1];

  it('when built, then it compiles in one stage and runs from another', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(runtime).toMatch(/^COPY --from=build /m);
    expect(runtime).toMatch(/npm ci --omit=dev/);
  });

  it('when built and run, then both stages use the supported LTS that .nvmrc names and .ci/run tests on', () => {
    const lts = readFileSync(join(process.cwd(), '.nvmrc'), 'utf8').trim();
    const images = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map(([, image]) => image);

    expect(Number(lts)).toBeGreaterThanOrEqual(24);
    expect(images).toEqual(images.map(() => `node:${lts}-bookworm-slim`));
    expect(readFileSync(join(process.cwd(), '.ci', 'run'), 'utf8')).toContain('LTS="$(cat .nvmrc)"');
  });

  it('when run, then the process is not root', () => {
    const user = /^USER (\S+)/m.exec(runtime)?.[1];

    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
  });

  it('when the image starts, then it runs the compiled service, and everything it copies exists here', () => {
    expect(runtime).toMatch(/^CMD \["node", "dist\/src\/main\.js"\]/m);
    for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const path of source.split(' ')) expect({ path, exists: existsSync(join(process.cwd(), path)) }).toEqual({ path, exists: true });
    }
  });
});

describe('docs/operations.md', () => {
  const rows = [...readFileSync(join(process.cwd(), 'docs', 'operations.md'), 'utf8').matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|/gm)].map(
    ([, name, cell]) => ({ name, cell: cell.trim() }),
  );

  it('when its configuration table is read, then it lists exactly the variables the service reads', () => {
    expect(rows.map((row) => row.name).sort()).toEqual([...knownVariables()].sort());
  });

  it('when a default is given as a value, then it is the schema’s default', () => {
    const defaults = validateEnvironment({}) as unknown as Record<string, unknown>;
    for (const { name, cell } of rows) {
      const literal = /^`(.*)`$/.exec(cell);
      if (!literal) continue; // "unset", "empty", "generated"
      expect({ name, default: literal[1] }).toEqual({ name, default: String(defaults[name]) });
    }
  });
});
