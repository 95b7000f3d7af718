import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { parse } from 'yaml';
import { readAuditSigningKey } from '../../src/config/audit-keys';
import { readSecretKey } from '../../src/config/end-user-settings';
import { DevelopmentEnvironment } from '../../dev/development.environment';
import { knownVariables, validateEnvironment } from '../../src/config/load-config';
import { generateSandboxKeys } from '../../dev/sandbox/sandbox-keys';

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
  network_mode?: string;
  restart?: string;
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
}

// Merge keys (`<<: *gateway-environment`), as compose reads them.
const compose = parse(readFileSync(join(process.cwd(), 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
const dockerfile = readFileSync(join(process.cwd(), 'Dockerfile'), 'utf8');
const packageJson = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const ciScript = (name: string) => readFileSync(join(process.cwd(), '.ci', name), 'utf8');

/** A stage's instructions, one a line, without comments or blank lines (the Dockerfile continues none). */
function instructions(stage: string): string[] {
  return stage
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The environment a stage's ENV instructions set: each NAME=value, the last one winning. */
function environmentOf(lines: string[]): Record<string, string> {
  return Object.fromEntries(
    lines.filter((line) => line.startsWith('ENV ')).flatMap((line) => [...line.matchAll(/(\w+)=(\S+)/g)].map(([, name, value]) => [name, value])),
  );
}

/** The sources of a stage's COPY instructions from the build context (not --from another stage). */
function copiedSources(lines: string[]): string[] {
  return lines.flatMap((line) => {
    const match = /^COPY (?!--from)(.+) \S+$/.exec(line);
    return match ? match[1].split(' ').map((source) => normalize(source).replace(/\/$/, '')) : [];
  });
}

/** Whether a COPY of these sources brings path into the image: the path itself or a folder above it. */
function isCopied(path: string, sources: string[]): boolean {
  const wanted = normalize(path);
  return sources.some((source) => wanted === source || wanted.startsWith(`${source}/`));
}

/** A script and the project's files it imports (relative specifiers), recursively. */
function withRelativeImports(script: string, seen = new Set<string>()): string[] {
  if (seen.has(script)) return [];
  seen.add(script);
  const text = readFileSync(join(process.cwd(), script), 'utf8');
  for (const [, specifier] of text.matchAll(/^import [^'"]*['"](\.{1,2}\/[^'"]+)['"]/gm)) {
    withRelativeImports(normalize(join(dirname(script), specifier)), seen);
  }
  return [...seen];
}

/**
 * Runs a compose service's command here, as compose would run it in its container: each path under
 * one of its mounts becomes the host's path (a bind mount's file in the repository, or the folder
 * given for a named volume).
 */
function runComposeCommand(service: ComposeService, volumeDirs: Record<string, string>): string {
  const mounts = (service.volumes ?? []).map((volume) => {
    const [source, target] = volume.split(':');
    return { target, host: /^[./]/.test(source) ? join(process.cwd(), source) : volumeDirs[source] };
  });
  const onHost = (arg: string) => {
    const mount = mounts.find(({ target }) => arg === target || arg.startsWith(`${target}/`));
    return mount ? mount.host + arg.slice(mount.target.length) : arg;
  };
  const [program, ...args] = service.command!;
  expect(program).toBe('node');
  return execFileSync(process.execPath, args.map(onHost), { encoding: 'utf8' });
}

/** `${NAME:-default}` as compose resolves it when NAME is not set. */
function withDefaults(environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).map(([key, value]) => [key, String(value).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
}

describe('docker-compose.yml', () => {
  it('when read, then it has postgres, the sandbox, the gateway and its worker, each with a health check, and the one-off that makes the keys', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['gateway', 'keys', 'postgres', 'sandbox', 'worker']);
    for (const name of ['gateway', 'postgres', 'sandbox', 'worker']) {
      expect(compose.services[name].healthcheck?.test.length).toBeGreaterThan(1);
    }
    expect(compose.services.keys.restart).toBe('no');
  });

  it('when an image is pulled from a registry, then its tag names an exact release, not a moving major', () => {
    const pulled = Object.entries(compose.services).filter(([, service]) => service.image !== undefined);

    expect(pulled.map(([name]) => name)).toContain('postgres');
    for (const [name, service] of pulled) {
      expect({ service: name, image: service.image }).toEqual({ service: name, image: expect.stringMatching(/^[\w./-]+:\d+\.\d+(\.\d+)?(-[a-z0-9]+)?$/) });
    }
  });

  it('when the API runs beside the worker, then the API runs no background work, and the worker runs it with the API’s settings once the API has migrated', () => {
    expect(compose.services.gateway.environment!.PROCESS_ROLE).toBe('api');
    expect(compose.services.worker.environment).toEqual({ ...compose.services.gateway.environment, PORT: '3001', PROCESS_ROLE: 'worker' });
    expect(compose.services.worker.command).toEqual(['node', 'dist/src/worker.js']);
    expect(compose.services.worker.depends_on).toEqual({ gateway: { condition: 'service_healthy' } });
  });

  it('when the gateway starts, then it waits for a healthy database, a healthy sandbox and its keys made', () => {
    expect(compose.services.gateway.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      sandbox: { condition: 'service_healthy' },
      keys: { condition: 'service_completed_successfully' },
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

  it('when the gateway and sandbox environments are read, then every variable is one their settings know (the sandbox’s: development tooling’s too)', () => {
    const known = { gateway: new Set(knownVariables()), worker: new Set(knownVariables()), sandbox: new Set(knownVariables([DevelopmentEnvironment])) };
    for (const name of ['gateway', 'worker', 'sandbox'] as const) {
      const unknown = Object.keys(compose.services[name].environment ?? {}).filter((key) => !known[name].has(key));
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
    }
  });

  it('when the gateway environment is validated as the service would, with the keys the keys service makes, then it is a complete production configuration', () => {
    const env = withDefaults(compose.services.gateway.environment!);
    // The sandbox's public key exists only inside the sandbox-keys volume; a real key stands in for
    // it here. The gateway's keys are made by the keys service's command, run as compose runs it.
    const dir = mkdtempSync(join(tmpdir(), 'pgw-compose-'));
    writeFileSync(join(dir, 'public.pem'), generateSandboxKeys().publicKeyPem);
    runComposeCommand(compose.services.keys, { 'gateway-keys': dir });
    const keysMount = compose.services.gateway.volumes!.find((v) => v.startsWith('gateway-keys:'))!.split(':')[1];
    const inVolume = (path: string) => (path.startsWith(`${keysMount}/`) ? join(dir, path.slice(keysMount.length + 1)) : path);

    const config = validateEnvironment({
      ...env,
      UPSTREAM_PUBLIC_KEY: join(dir, 'public.pem'),
      AUDIT_SIGNING_KEY: inVolume(env.AUDIT_SIGNING_KEY),
      END_USER_PSEUDONYM_KEY: inVolume(env.END_USER_PSEUDONYM_KEY),
      DATA_KEY: inVolume(env.DATA_KEY),
    });

    expect(config.NODE_ENV).toBe('production');
    expect(config.UPSTREAM_BASE_URL).toBeDefined();
    expect(config.DATABASE_URL).toBeDefined();
    expect(config.HOST).toBe('0.0.0.0');
    expect(compose.services.gateway.volumes).toContain(`gateway-keys:${keysMount}:ro`);
    expect(readAuditSigningKey(config.AUDIT_SIGNING_KEY!).asymmetricKeyType).toBe('ed25519');
    expect(readSecretKey(config.END_USER_PSEUDONYM_KEY!).length).toBeGreaterThanOrEqual(32);
    expect(readSecretKey(config.DATA_KEY!).length).toBe(32);
  });

  it('when the keys service runs again, then it keeps the keys it made, readable by their owner only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgw-compose-keys-'));

    const first = runComposeCommand(compose.services.keys, { 'gateway-keys': dir });
    const made = readdirSync(dir).map((file) => ({ file, text: readFileSync(join(dir, file), 'utf8'), mode: statSync(join(dir, file)).mode & 0o777 }));
    const second = runComposeCommand(compose.services.keys, { 'gateway-keys': dir });

    expect(made.map(({ file, mode }) => ({ file, mode }))).toEqual([
      { file: 'audit-signing-key.pem', mode: 0o600 },
      { file: 'data.key', mode: 0o600 },
      { file: 'end-user-pseudonym.key', mode: 0o600 },
    ]);
    expect(first).toMatch(/audit-signing-key\.pem: made/);
    expect(second).toMatch(/audit-signing-key\.pem: kept\n.*end-user-pseudonym\.key: kept\n.*data\.key: kept/);
    for (const { file, text } of made) expect(readFileSync(join(dir, file), 'utf8')).toBe(text);
  });

  it('when the wiring is followed, then the gateway reaches postgres by service name and the sandbox on loopback (its network), with matching credentials', () => {
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
    // A provider over plain http only on loopback (production refuses any other): the gateway runs in the sandbox's network, whose port it publishes.
    expect(compose.services.gateway.network_mode).toBe('service:sandbox');
    expect(compose.services.gateway.ports).toBeUndefined();
    expect(compose.services.sandbox.ports).toEqual([`${gateway.PORT}:${gateway.PORT}`]);
    expect(upstream.hostname).toBe('127.0.0.1');
    expect(upstream.port).toBe(sandbox.SANDBOX_PORT);
    expect(sandbox.SANDBOX_HOST).toBe('127.0.0.1');
    expect(gateway.UPSTREAM_BEARER_TOKEN).toBe(sandbox.SANDBOX_BEARER_TOKEN);
    // The sandbox writes DATA_DIR/sandbox/public.pem into the volume the gateway mounts.
    const [volume, mountedAt] = compose.services.gateway.volumes!.find((v) => v.startsWith('sandbox-keys:'))!.split(':');
    const sandboxMount = compose.services.sandbox.volumes!.find((v) => v.startsWith(`${volume}:`))!.split(':')[1];
    expect(sandboxMount).toBe(sandbox.DATA_DIR);
    expect(gateway.UPSTREAM_PUBLIC_KEY).toBe(`${mountedAt}/sandbox/public.pem`);
  });
});

describe('Dockerfile', () => {
  const [preamble, ...stages] = dockerfile.split(/^FROM /m);
  const runtime = stages[stages.length - 1];
  const buildStage = stages.find((stage) => /^\S+ AS build$/m.test(stage.split('\n')[0]))!;
  /** The ARGs declared before the first FROM, which FROM lines may use. */
  const globalArgs = Object.fromEntries([...preamble.matchAll(/^ARG (\w+)=(\S+)$/gm)].map(([, name, value]) => [name, value]));
  const nodeVersion = globalArgs.NODE_VERSION;
  const resolve = (text: string) => text.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced: string, bare: string) => globalArgs[braced ?? bare] ?? '');

  it('when built, then it compiles in one stage and runs from another', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(runtime).toMatch(/^COPY --from=build /m);
    expect(runtime).toMatch(/npm ci --omit=dev/);
  });

  it('when built and run, then both stages use one exact release of the supported LTS that .nvmrc names', () => {
    const lts = readFileSync(join(process.cwd(), '.nvmrc'), 'utf8').trim();
    const stageNames = [...dockerfile.matchAll(/^FROM \S+ AS (\S+)$/gm)].map(([, name]) => name);
    // A stage may start from an earlier one (the sandbox's from the build); every other FROM is the one base.
    const images = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map(([, image]) => resolve(image)).filter((image) => !stageNames.includes(image));

    expect(Number(lts)).toBeGreaterThanOrEqual(24);
    expect(nodeVersion).toMatch(new RegExp(`^${lts}\\.\\d+\\.\\d+$`));
    expect(images).toEqual(images.map(() => `node:${nodeVersion}-bookworm-slim`));
    expect(ciScript('run')).toContain('LTS="$(cat .nvmrc)"');
  });

  it('when npm ci installs the Node the service runs on, and CI builds the image, then both are the Dockerfile’s exact release', () => {
    // npm scripts find node_modules/.bin/node (the `node` package) first: the suite, npm start and the commands run on it.
    expect(packageJson.devDependencies.node).toBe(nodeVersion);
    // engines names the major it runs on, and no older one (Node 20 is past its end of life).
    expect(packageJson.engines.node).toMatch(new RegExp(`^\\^${nodeVersion.split('.')[0]}\\.\\d+\\.\\d+$`));
    for (const name of ['run', 'image']) {
      const script = ciScript(name);
      const assignment = /^NODE_VERSION="\$\(.+\)"$/m.exec(script)?.[0];

      expect({ script: name, assignment: assignment !== undefined }).toEqual({ script: name, assignment: true });
      // The line as the script runs it, here: what it reads must be the Dockerfile's release.
      const read = execFileSync('bash', ['-c', `set -eu; ${assignment!}; printf %s "$NODE_VERSION"`], { cwd: process.cwd(), encoding: 'utf8' });
      expect({ script: name, read }).toEqual({ script: name, read: nodeVersion });
    }
    // .ci/run refuses a packaged Node other than the Dockerfile's; .ci/image fetches that release for the image's base.
    expect(ciScript('run')).toContain(`PACKAGED_NODE="$(node -p 'require("./package.json").devDependencies.node')"`);
    const packs = [...ciScript('image').matchAll(/npm pack[^\n]*"(node-linux-[^"]+)"/g)].map(([, spec]) => spec);
    expect(packs.length > 0 && packs.every((spec) => /@\$\{?NODE_VERSION\}?$/.test(spec))).toBe(true);
    // The base .ci/image makes is tagged with the name the FROM lines ask for.
    const baseImage = /^BASE_IMAGE="(.+)"$/m.exec(ciScript('image'))![1];
    expect(resolve(baseImage)).toBe(`docker.io/library/${resolve(runtime.split(/\s/)[0])}`);
  });

  it('when the build stage runs npm run build, then everything that command reads was copied before it', () => {
    const lines = instructions(buildStage);
    const runAt = lines.findIndex((line) => /^RUN npm run build\b/.test(line));
    const copied = copiedSources(lines.slice(0, runAt));
    const command = packageJson.scripts.build;
    const scripts = [...command.matchAll(/\bnode (\S+)/g)].flatMap(([, script]) => withRelativeImports(script));
    const tsconfigs = [...command.matchAll(/\btsc -p (\S+)/g)].map(([, file]) => file);
    const compiled = tsconfigs.flatMap((file) => {
      const config = JSON.parse(readFileSync(join(process.cwd(), file), 'utf8')) as { extends?: string; include?: string[] };
      return [...(config.extends ? [normalize(config.extends)] : []), ...(config.include ?? [])];
    });

    expect(runAt).toBeGreaterThan(0);
    expect(scripts).toContain('scripts/prune-dist.mjs');
    // Development tooling (dev/) is compiled where it is copied, in a checkout or the sandbox's stage; never here.
    expect(compiled).toContain('dev');
    expect(isCopied('dev/main.ts', copiedSources(lines))).toBe(false);
    for (const path of ['package.json', 'package-lock.json', ...tsconfigs, ...compiled.filter((path) => path !== 'dev'), ...scripts]) {
      expect({ path, copiedFirst: isCopied(path, copied) }).toEqual({ path, copiedFirst: true });
    }
  });

  it('when the production image is assembled, then it takes the service’s compiled output only, and installs no development dependency', () => {
    const fromBuild = instructions(runtime)
      .filter((line) => line.startsWith('COPY --from=build '))
      .map((line) => line.split(/\s+/)[2]);

    expect(fromBuild.sort()).toEqual(['/app/dist/migrations', '/app/dist/src']);
    expect(runtime).toMatch(/^RUN npm ci --omit=dev /m);
    expect(isCopied('dev/main.ts', copiedSources(instructions(runtime)))).toBe(false);
    expect(isCopied('dev/web-app/index.html', copiedSources(instructions(runtime)))).toBe(false);
  });

  it('when an operator runs an npm command in the image, then what it runs is there and it builds nothing', () => {
    const copied = copiedSources(instructions(runtime));
    // npm run -s clients -- …, audit:verify, migration:run and the others: build-if-changed, then a CLI.
    const commands = Object.entries(packageJson.scripts).filter(([, command]) => command.startsWith('node scripts/build-if-changed.mjs && '));

    expect(commands.map(([name]) => name)).toEqual(expect.arrayContaining(['clients', 'audit:verify', 'migration:run']));
    expect(isCopied('package.json', copied)).toBe(true);
    for (const script of withRelativeImports('scripts/build-if-changed.mjs')) {
      expect({ script, copied: isCopied(script, copied) }).toEqual({ script, copied: true });
    }
    // Without src/ in the image, build-if-changed leaves the compiled dist/ as it is (its own test).
    expect(isCopied('src/main.ts', copied)).toBe(false);
    const entries = commands.map(([name, command]) => ({ name, entry: /&& node (?:--require (\S+) )?(dist\/\S+)\.js\b/.exec(command) }));
    // The operator's commands run the service's code; start, users, sandbox and webhooks are development's (dist/dev/, not in the image).
    const operators = entries.filter(({ entry }) => entry?.[2].startsWith('dist/src/'));
    expect(operators.map(({ name }) => name)).toEqual(expect.arrayContaining(['clients', 'audit:verify', 'migration:run', 'psql']));
    expect(
      entries
        .filter(({ entry }) => !entry?.[2].startsWith('dist/src/'))
        .map(({ name }) => name)
        .sort(),
    ).toEqual(['sandbox', 'start', 'users', 'webhooks']);
    for (const { name, entry } of operators) {
      // dist/<path>.js is compiled from <path>.ts, which the build stage copies and compiles.
      expect({ name, source: existsSync(join(process.cwd(), `${entry![2].replace(/^dist\//, '')}.ts`)) }).toEqual({ name, source: true });
      // What it preloads (the local database's offer, which finds no dist/dev/ there) is copied too.
      if (entry![1]) expect({ name, preload: isCopied(normalize(entry![1]), copied) }).toEqual({ name, preload: true });
    }
  });

  it('when the image runs, then DATA_DIR is an absolute directory that the runtime user owns', () => {
    const lines = instructions(runtime);
    const user = /^USER (\S+)$/m.exec(runtime)![1];
    const dataDir = environmentOf(lines).DATA_DIR;
    const userAt = lines.findIndex((line) => line.startsWith('USER '));
    const owned = lines
      .slice(0, userAt)
      .some((line) => line.startsWith('RUN ') && line.includes(`mkdir -p ${dataDir}`) && new RegExp(`chown ${user}(:\\w+)? ${dataDir}(\\s|$)`).test(line));

    expect(dataDir).toMatch(/^\//);
    expect({ DATA_DIR: dataDir, ownedBy: owned ? user : 'root' }).toEqual({ DATA_DIR: dataDir, ownedBy: user });
  });

  it('when run, then the process is not root', () => {
    const user = /^USER (\S+)/m.exec(runtime)?.[1];

    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
  });

  it('when the image runs, then the allocator its LD_PRELOAD names is a package it installs', () => {
    const lines = instructions(runtime);
    const env = environmentOf(lines);
    const installedAt = lines.findIndex((line) => /^RUN apt-get update && .*\bapt-get install\b.*\blibjemalloc2\b/.test(line));
    const preloadedAt = lines.findIndex((line) => /^ENV .*\bLD_PRELOAD=/.test(line));

    expect({ LD_PRELOAD: env.LD_PRELOAD, installed: installedAt >= 0, preloadedAfterwards: preloadedAt > installedAt }).toEqual({
      LD_PRELOAD: 'libjemalloc.so.2',
      installed: true,
      preloadedAfterwards: true,
    });
    expect(env.MALLOC_CONF).toMatch(/(^|,)dirty_decay_ms:\d+(,|$)/);
  });

  it('when the image starts, then it runs the compiled service, and everything it copies exists here', () => {
    expect(runtime).toMatch(/^CMD \["node", "--max-semi-space-size=16", "--no-maglev", "--no-allocation-site-pretenuring", "dist\/src\/main\.js"\]/m);
    for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const path of source.split(' ')) expect({ path, exists: existsSync(join(process.cwd(), path)) }).toEqual({ path, exists: true });
    }
  });

  it('when the service is started as production runs it (npm run start:prod), then it runs with the image’s command', () => {
    const cmd = JSON.parse(/^CMD (\[.*\])\s*$/m.exec(runtime)![1]) as string[];
    const scripts = (JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

    expect(scripts['start:prod']).toBe(cmd.join(' '));
  });
});

describe('docs/operations.md', () => {
  const rows = [...readFileSync(join(process.cwd(), 'docs', 'operations.md'), 'utf8').matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|/gm)].map(
    ([, name, cell]) => ({ name, cell: cell.trim() }),
  );

  it('when its configuration table is read, then it lists exactly the variables the service reads', () => {
    // The service's settings and development tooling's, each feature's class (src/config/environment/, dev/).
    expect(rows.map((row) => row.name).sort()).toEqual([...knownVariables([DevelopmentEnvironment])].sort());
  });

  it('when a default is given as a value, then it is the schema’s default', () => {
    const defaults = validateEnvironment({}, { also: [DevelopmentEnvironment] }) as unknown as Record<string, unknown>;
    for (const { name, cell } of rows) {
      const literal = /^`(.*)`$/.exec(cell);
      if (!literal) continue; // "unset", "empty", "generated"
      expect({ name, default: literal[1] }).toEqual({ name, default: String(defaults[name]) });
    }
  });
});

describe('.env.example', () => {
  it('when compared with the settings, then it lists exactly the variables the service and its development tooling read', () => {
    const example = readFileSync(join(process.cwd(), '.env.example'), 'utf8');
    const listed = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);

    expect([...new Set(listed)].sort()).toEqual([...knownVariables([DevelopmentEnvironment])].sort());
  });
});
