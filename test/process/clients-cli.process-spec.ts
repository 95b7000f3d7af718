import { runClientsCli } from '../../src/auth/cli/clients.command';
import { CURRENT_API_VERSION } from '../../src/common/domain/api-versions';
import { ApiClientsService } from '../../src/auth/domain/api-clients.service';
import { startTestApp, TestApp } from '../support/app';
import { waitFor } from '../support/wait-for';

interface Run {
  code: number;
  out: string[];
  err: string[];
}

describe('clients CLI', () => {
  let t: TestApp;

  /** As an operator runs it: the service's URL, and the owner's, which changes clients. */
  async function cli(...argv: string[]): Promise<Run> {
    return cliWith({ DATABASE_URL: t.database.url, MIGRATIONS_DATABASE_URL: t.database.ownerUrl, LOG_LEVEL: 'warn' }, ...argv);
  }

  async function cliWith(env: NodeJS.ProcessEnv, ...argv: string[]): Promise<Run> {
    const run: Run = { code: -1, out: [], err: [] };
    run.code = await runClientsCli(argv, env, {
      out: (line) => run.out.push(line),
      err: (line) => run.err.push(line),
    });
    return run;
  }

  async function me(token: string): Promise<number> {
    const response = await fetch(`${t.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    return response.status;
  }

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('when create or revoke is run with the service’s URL alone, then it exits 1 naming MIGRATIONS_DATABASE_URL, and nothing changes (listing still works)', async () => {
    const serviceOnly = { DATABASE_URL: t.database.url, LOG_LEVEL: 'warn' };
    const token = (JSON.parse((await cli('create', '--name', 'kept', '--role', 'partner')).out[0]) as { token: string }).token;

    const created = await cliWith(serviceOnly, 'create', '--name', 'insider', '--role', 'admin');
    const revoked = await cliWith(serviceOnly, 'revoke', '--name', 'kept');
    const listed = await cliWith(serviceOnly, 'list');

    expect(created).toMatchObject({ code: 1, out: [] });
    expect(created.err.join('\n')).toMatch(/MIGRATIONS_DATABASE_URL: required to create, revoke or change API clients/);
    expect(revoked.code).toBe(1);
    expect(listed.code).toBe(0);
    expect(listed.out.map((line) => (JSON.parse(line) as { name: string }).name)).toEqual(expect.arrayContaining(['kept']));
    expect(listed.out.map((line) => (JSON.parse(line) as { name: string }).name)).not.toContain('insider');
    expect(await me(token)).toBe(200);
  });

  it('when a client is created with an API version, then it is pinned to a known one, and an unknown one is refused', async () => {
    const pinned = await cli('create', '--name', 'pinned-app', '--role', 'partner', '--api-version', '2026-12-01');
    const unknown = await cli('create', '--name', 'future-app', '--role', 'partner', '--api-version', '2031-01-01');

    expect([pinned.code, JSON.parse(pinned.out[0]).api_version]).toEqual([0, '2026-12-01']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.err.join('\n')).toContain('api version must be one of 2026-12-01');
  });

  it('when a client is created, used, listed and revoked, then its token works until the revocation', async () => {
    const clients = t.app.get(ApiClientsService);
    const heard = clients.changesHeard;
    const created = await cli('create', '--name', 'android-app', '--role', 'partner', '--tenant', 'acme');
    expect(created.code).toBe(0);
    // Only the revocation may make the instance forget the client below, not the creation's late announcement.
    await waitFor(() => clients.changesHeard > heard, { timeoutMs: 5000, what: 'the creation to be announced' });
    expect(created.out).toHaveLength(1);
    const printed = JSON.parse(created.out[0]) as Record<string, string | null>;
    expect(Object.keys(printed).sort()).toEqual(['api_version', 'expires_at', 'id', 'name', 'role', 'tenant', 'token']);
    expect(printed).toMatchObject({ name: 'android-app', role: 'partner', tenant: 'acme', expires_at: null, api_version: CURRENT_API_VERSION });
    const token = printed.token!;
    expect(await me(token)).toBe(200);
    expect(clients.rememberedCount).toBeGreaterThan(0);

    const listed = await cli('list');
    expect(listed.code).toBe(0);
    const rows = listed.out.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows.find((r) => r.name === 'android-app')).toMatchObject({ role: 'partner', tenant: 'acme', revoked_at: null });
    expect(listed.out.join('\n')).not.toContain(token);
    expect(rows.every((r) => !('token' in r) && !('token_hash' in r))).toBe(true);

    const revoked = await cli('revoke', '--name', 'android-app');
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.out[0]).revoked_at).not.toBeNull();
    // The running service hears of it from PostgreSQL (NOTIFY on commit) and forgets the client.
    await waitFor(() => clients.rememberedCount === 0, { timeoutMs: 5000, what: 'the revocation to be announced' });
    expect(await me(token)).toBe(401);
  });

  it('when --expires-at is given, then it is stored and printed', async () => {
    const created = await cli('create', '--name', 'pilot', '--role', 'admin', '--expires-at', '2099-01-01T00:00:00Z');

    expect(created.code).toBe(0);
    expect(JSON.parse(created.out[0])).toMatchObject({ role: 'admin', tenant: 'default', expires_at: '2099-01-01T00:00:00.000Z' });
  });

  it('when an admin client is made without --expires-at, then its token is break-glass: it expires after ADMIN_TOKEN_DEFAULT_TTL_HOURS, a partner one does not', async () => {
    const before = Date.now();
    const admin = await cli('create', '--name', 'on-call', '--role', 'admin');
    const partner = await cli('create', '--name', 'backend-2', '--role', 'partner');

    expect(admin.code).toBe(0);
    const expiresAt = Date.parse(JSON.parse(admin.out[0]).expires_at as string);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 8 * 3_600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 8 * 3_600_000);
    expect(JSON.parse(partner.out[0]).expires_at).toBeNull();
  });

  it('when an active client already has the name, then create fails and says so', async () => {
    await cli('create', '--name', 'twice', '--role', 'partner');

    const second = await cli('create', '--name', 'twice', '--role', 'partner');

    expect(second.code).toBe(1);
    expect(second.err.join('\n')).toContain("An active client named 'twice' already exists");
    expect(second.out).toEqual([]);
  });

  it('when nothing active has the name, then revoke exits 1', async () => {
    const run = await cli('revoke', '--name', 'nobody');

    expect(run.code).toBe(1);
    expect(run.err.join('\n')).toContain("No active client named 'nobody'");
  });

  it.each([
    [['create', '--name', 'x', '--role', 'root']],
    [['create', '--role', 'partner']],
    [['create', '--name', 'x', '--role', 'partner', '--expires-at', 'tomorrow']],
    [['create', '--name', 'x', '--role', 'partner', '--colour', 'blue']],
    [['revoke']],
    [['delete', '--name', 'x']],
    [[]],
  ])('when called as %j, then it exits 2 with the usage and prints no token', async (argv) => {
    const run = await cli(...argv);

    expect(run.code).toBe(2);
    expect(run.err.join('\n')).toContain('Usage: npm run clients');
    expect(run.out).toEqual([]);
  });
});
