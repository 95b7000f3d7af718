import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { webLogin } from '../../dev/identity-provider/dev-login';
import {
  asNpmRunsIt,
  cleanEnv,
  clusterPid,
  freePort,
  listeningPorts,
  removeDataDir,
  runProcess,
  scratchDataDir,
  startProcess,
  Started,
  waitForOutput,
} from '../support/processes';

/**
 * What a new user does: the built service with no environment at all. It must start its own
 * PostgreSQL, print working tokens once, share that database with the clients CLI while running,
 * shut down cleanly, and leave the CLI able to work on its own afterwards.
 */
const MAIN = join(process.cwd(), 'dist', 'dev', 'main.js');
const CLIENTS = asNpmRunsIt(join(process.cwd(), 'dist', 'src', 'auth', 'cli', 'clients.cli.js'));
const VERIFY = asNpmRunsIt(join(process.cwd(), 'dist', 'src', 'audit', 'cli', 'audit-verify.cli.js'));
const SANDBOX = join(process.cwd(), 'dist', 'dev', 'sandbox', 'main.js');
const PURGE = asNpmRunsIt(join(process.cwd(), 'dist', 'src', 'audit', 'cli', 'audit-purge.cli.js'));
const USERS = join(process.cwd(), 'dist', 'dev', 'cli', 'users.cli.js');

describe('first start with embedded defaults (one new user, step by step)', () => {
  let dataDir: string;
  let service: Started | undefined;
  let env: NodeJS.ProcessEnv;
  let base: string;
  let sandboxPort: number;
  let partner: string | undefined;
  let admin: string | undefined;
  let cliToken: string;
  let demo: string;
  let madeBeforeRestart: string;

  const where = (started: Started) => {
    const ports = listeningPorts(started);
    return { base: `http://127.0.0.1:${ports.port}`, sandboxPort: ports.sandboxPort };
  };

  beforeAll(async () => {
    dataDir = scratchDataDir();
    // Both listen on a port of their own choosing, read from what the service prints.
    env = cleanEnv({ DATA_DIR: dataDir, PORT: '0', SANDBOX_PORT: '0', DEV_OIDC_PORT: '0', DEV_STAFF_OIDC_PORT: '0' });
  });
  afterAll(async () => {
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    await removeDataDir(dataDir);
  });

  it('when started with no environment at all, then it serves in sandbox mode and prints development tokens', async () => {
    service = startProcess(MAIN, [], env);
    await waitForOutput(service, /Partner gateway listening/);
    ({ base, sandboxPort } = where(service));
    partner = service.output().match(/partner\s+(pgw_[A-Za-z0-9_-]+)/)?.[1];
    admin = service.output().match(/admin\s+(pgw_[A-Za-z0-9_-]+)/)?.[1];

    expect(service.output()).toContain('DEVELOPMENT CLIENT TOKENS');
    expect(service.output()).toContain('SANDBOX MODE');
    expect(partner).toBeDefined();
    expect(admin).toBeDefined();
  }, 120_000);

  it('when started with embedded defaults, then the service connects as a role of its own that cannot rewrite the audit log, with no setting and no warning', async () => {
    const ready = (await (await fetch(`${base}/health/details`, { headers: { authorization: `Bearer ${admin}` } })).json()) as {
      data: { details: { auditLog: unknown } };
    };
    const credentials = JSON.parse(readFileSync(join(dataDir, 'embedded-postgres.json'), 'utf8')) as { user: string; serviceUser: string };

    expect(ready.data.details.auditLog).toEqual({ status: 'up', protected: true });
    expect(credentials.serviceUser).not.toBe(credentials.user);
    expect(service!.output()).not.toContain('The audit log is not protected');
  });

  it('when the printed tokens are used, then they are the partner and the admin, and a wrong one is 401', async () => {
    const me = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${partner}` } });
    const adminCall = await fetch(`${base}/api/v1/clients`, { headers: { authorization: `Bearer ${admin}` } });
    const wrong = await fetch(`${base}/api/v1/me`, { headers: { authorization: 'Bearer pgw_wrong' } });

    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { name: string } }).data.name).toBe('dev-partner');
    expect(adminCall.status).toBe(200);
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { details: string } }).error.details).toBe('The token is invalid or expired');
  });

  it('when readiness, the docs and the in-process sandbox are asked, then they answer, the sandbox with the key kept under DATA_DIR', async () => {
    const ready = await fetch(`${base}/health/ready`);
    const details = await fetch(`${base}/health/details`, { headers: { authorization: `Bearer ${admin}` } });
    const sandboxKey = await fetch(`http://127.0.0.1:${sandboxPort}/__sandbox/public-key`);

    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { data: unknown }).data).toEqual({ status: 'ok' });
    expect(((await details.json()) as { data: { details: { upstream: unknown } } }).data.details.upstream).toEqual({ status: 'up', circuit: 'closed' });
    expect(sandboxKey.status).toBe(200);
    expect((await sandboxKey.text()).trim()).toBe(readFileSync(join(dataDir, 'sandbox', 'public.pem'), 'utf8').trim());
    expect((await fetch(`${base}/docs`)).status).toBe(200);
  });

  it('when a new user follows the token block to an end-user token, then demo reaches the demo customer and alex does not', async () => {
    const issuer = /"issuer":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(service!.output())?.[1];
    const demoCustomer = JSON.parse(readFileSync(join(dataDir, 'demo-customer.json'), 'utf8')).customer_id as string;
    const tokenOf = async (user: string) => {
      const result = await runProcess(USERS, ['token', '--user', user], { ...env, OIDC_ISSUER: issuer! }, { timeoutMs: 30_000 });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      return result.stdout.trim();
    };

    const demoToken = await tokenOf('demo');
    const me = (await (await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${demoToken}` } })).json()) as {
      data: { role: string; customer_ids: string[] };
    };
    const alexBalance = await fetch(`${base}/api/v1/customers/${demoCustomer}/balance`, { headers: { authorization: `Bearer ${await tokenOf('alex')}` } });

    expect(issuer).toBeDefined();
    expect(service!.output()).toContain('npm run -s users -- token --user demo');
    expect(me.data).toMatchObject({ role: 'end_user', customer_ids: [demoCustomer] });
    expect(alexBalance.status).toBe(404);
  }, 60_000);

  it('when a new user opens the reference web app and logs demo in, then the browser session lists the demo customer', async () => {
    const demoCustomer = JSON.parse(readFileSync(join(dataDir, 'demo-customer.json'), 'utf8')).customer_id as string;

    const page = await fetch(`${base}/app/`);
    const html = await page.text();
    const { session, location } = await webLogin(base, 'demo');
    const me = (await (await fetch(`${base}/api/v1/session`, { headers: { cookie: `__Host-gw_session=${session}`, 'x-csrf': '1' } })).json()) as {
      data: { customer_ids: string[] };
    };

    expect(service!.output()).toContain(`${base}/app/`);
    expect([page.status, html]).toEqual([200, expect.stringContaining('Partner web app')]);
    expect(location).toBe(`${base}/app/`);
    expect(me.data.customer_ids).toEqual([demoCustomer]);
  }, 60_000);

  it('when Swagger UI is opened on the first start, then its examples name the demo customer, made for the development partner', async () => {
    demo = JSON.parse(readFileSync(join(dataDir, 'demo-customer.json'), 'utf8')).customer_id as string;
    const served = (await (await fetch(`${base}/docs-json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; example?: string }[] }>>;
      components: { schemas: Record<string, { properties: Record<string, { example?: unknown }> }> };
    };

    expect(service!.output()).toContain(`Demo customer: ${demo}`);
    expect(served.paths['/api/v1/customers/{customer_id}/balance'].get.parameters?.find((p) => p.name === 'customer_id')?.example).toBe(demo);
    expect(served.components.schemas.OpenBankAccountRequest.properties.customer_id.example).toBe(demo);
    expect((await fetch(`${base}/api/v1/customers/${demo}/balance`, { headers: { authorization: `Bearer ${partner}` } })).status).toBe(200);
    const made = await fetch(`${base}/api/v1/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${partner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', phone_number: '+15555550123' }),
    });
    madeBeforeRestart = ((await made.json()) as { data: { customer_id: string } }).data.customer_id;
  });

  it('when `npm run sandbox` is started on the port the service’s sandbox holds, then it says so in one line and exits non-zero', async () => {
    // Should it start after all, it is stopped after 20 s and the test fails on its exit code.
    const result = await runProcess(SANDBOX, [], { ...env, SANDBOX_PORT: String(sandboxPort) }, { timeoutMs: 20_000 });

    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(`127.0.0.1:${sandboxPort}: the port is taken`)]);
    expect(result.stdout).toBe('');
  });

  it('when `npm run sandbox` starts on a free port, then it prints a complete live-mode start, DATABASE_URL included', async () => {
    const sandbox = startProcess(SANDBOX, [], { ...env, SANDBOX_PORT: String(await freePort()) });
    try {
      await waitForOutput(sandbox, /PORT=3001 npm start/);
      const printed = sandbox.output();

      for (const variable of [
        'UPSTREAM_BASE_URL=http://127.0.0.1:',
        'UPSTREAM_BEARER_TOKEN=sbx_',
        `UPSTREAM_PUBLIC_KEY=${join(dataDir, 'sandbox', 'public.pem')}`,
        'DATABASE_URL=postgres://',
      ]) {
        expect(printed).toContain(variable);
      }
    } finally {
      sandbox.child.kill('SIGTERM');
      await sandbox.exited;
    }
  });

  it('when the clients CLI runs while the service does, then it joins the same embedded server', async () => {
    const serverPid = clusterPid(dataDir);

    const created = await runProcess(CLIENTS, ['create', '--name', 'from-cli', '--role', 'partner'], env);

    expect(created.code).toBe(0);
    cliToken = (JSON.parse(created.stdout) as { token: string }).token;
    expect((await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${cliToken}` } })).status).toBe(200);
    expect(clusterPid(dataDir)).toBe(serverPid);
  }, 60_000);

  it('when audit:verify runs while the service does, then the log it sealed with the key made under DATA_DIR is intact', async () => {
    await waitForOutput(service!, /"msg":"Audit checkpoint"/);

    const verified = await runProcess(VERIFY, [], env);

    expect(service!.output()).toContain('Made the key that signs audit checkpoints');
    expect(statSync(join(dataDir, 'audit-signing-key.pem')).mode & 0o777).toBe(0o600);
    expect(verified.code).toBe(0);
    const summary = JSON.parse(verified.stdout.trim().split('\n').pop()!) as { status: string; events: number; newest_checkpoint: { seq: number } | null };
    expect(summary).toMatchObject({ status: 'intact', newest_checkpoint: { seq: expect.any(Number) } });
    expect(summary.events).toBeGreaterThan(0);
  }, 60_000);

  it('when audit:purge runs, then its stdout is its one JSON line, with nothing of what the sealer logs beside it', async () => {
    const purged = await runProcess(PURGE, [], env);

    expect(purged.code).toBe(0);
    expect(
      purged.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([{ purged: 0, retention_days: 400 }]);
    expect(purged.stderr).toBe('');
  }, 60_000);

  it('when sent SIGTERM, then it stops cleanly, its PostgreSQL with it', async () => {
    service!.child.kill('SIGTERM');

    expect(await service!.exited).toBe(0);
    expect(service!.output()).toContain('"msg":"Stopped"');
    expect(clusterPid(dataDir)).toBeUndefined();
  }, 60_000);

  it('when the clients CLI runs on its own, then it starts the embedded server, works, and stops it again', async () => {
    const listed = await runProcess(CLIENTS, ['list'], env);

    expect(listed.code).toBe(0);
    const names = listed.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { name: string }).name);
    expect(names.sort()).toEqual(['dev-admin', 'dev-partner', 'from-cli']);
    expect(listed.stdout).not.toContain(cliToken);
    expect(clusterPid(dataDir)).toBeUndefined();
  }, 60_000);

  it('when started a second time, then it finds its clients and prints no tokens, and the sandbox still knows the customers made before', async () => {
    service = startProcess(MAIN, [], env);
    await waitForOutput(service, /Partner gateway listening/);
    ({ base, sandboxPort } = where(service));
    const balanceOf = async (id: string) => (await fetch(`${base}/api/v1/customers/${id}/balance`, { headers: { authorization: `Bearer ${partner}` } })).status;
    const served = (await (await fetch(`${base}/docs-json`)).json()) as {
      components: { schemas: Record<string, { properties: Record<string, { example?: unknown }> }> };
    };

    expect(service.output()).not.toContain('DEVELOPMENT CLIENT TOKENS');
    expect([await balanceOf(demo), await balanceOf(madeBeforeRestart)]).toEqual([200, 200]);
    expect(served.components.schemas.OpenBankAccountRequest.properties.customer_id.example).toBe(demo);
    service.child.kill('SIGINT');
    expect(await service.exited).toBe(0);
  }, 120_000);

  it('when configuration is bad, then start-up stops with one message naming every bad variable', async () => {
    const result = await runProcess(MAIN, [], cleanEnv({ DATA_DIR: dataDir, PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' }));

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration (3 problems)');
    expect(result.stderr).toMatch(/PORT: /);
    expect(result.stderr).toMatch(/LOG_LEVEL: /);
    expect(result.stderr).toMatch(/DATABASE_URL: /);
    expect(result.stderr).toContain('.env.example');
  });
});
