import { Client } from 'pg';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';
import { waitFor } from '../support/wait-for';

/** What a check found: its state, the circuit, the sealer, the audit log's protection, the role's name. */
const ANY_DETAIL = /database|postgres|upstream|circuit|audit|protected|sealer|checkpoint|lagging|reason|"info"|failing checks/i;

/**
 * /health/ready answers anyone with its verdict alone; what each check found is an admin's, at
 * /health/details (an admin path, as /metrics is in live mode).
 */
describe('readiness: the verdict for anyone, the details for an admin', () => {
  let t: TestApp;
  let admin: string;
  let partner: string;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await t.createClient('admin');
    partner = await t.createClient('partner');
  });
  afterAll(async () => {
    await t.close();
  });

  it('when anyone asks whether the service is ready, then the answer is the verdict alone, whatever token comes with it', async () => {
    const answers = await Promise.all([undefined, partner, admin].map((token) => callApi(t.baseUrl, 'GET', '/health/ready', { token })));

    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ status: 200, message: 'OK', data: { status: 'ok' }, error: null });
    }
  });

  it('when an admin asks for the details, then each check is there: PostgreSQL, the circuit, the audit log’s protection and the sealer', async () => {
    const answer = await callApi<{ status: string; details: Record<string, Record<string, unknown>> }>(t.baseUrl, 'GET', '/health/details', { token: admin });

    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toMatch(/no-store/);
    expect(answer.body.data!.status).toBe('ok');
    expect(answer.body.data!.details).toEqual({
      database: expect.objectContaining({ status: 'up' }),
      upstream: { status: 'up', circuit: 'closed' },
      auditLog: { status: 'up', protected: true },
      auditSealer: expect.objectContaining({ status: 'up', state: expect.any(String), lagging: false }),
    });
  });

  it('when anyone else asks for the details, then 401 without a token (with the bearer challenge) and 403 with a partner’s, and nothing of them', async () => {
    const nobody = await callApi(t.baseUrl, 'GET', '/health/details');
    const asPartner = await callApi(t.baseUrl, 'GET', '/health/details', { token: partner });
    const wrongToken = await callApi(t.baseUrl, 'GET', '/health/details', { token: 'pgw_not-a-token' });

    expect(nobody.status).toBe(401);
    expect(nobody.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(asPartner.status).toBe(403);
    expect(asPartner.body.error!.code).toBe('AUTH.FORBIDDEN');
    expect(wrongToken.status).toBe(401);
    for (const refused of [nobody, asPartner, wrongToken]) expect(refused.body.data).toBeNull();
  });

  it('when PostgreSQL does not answer, then readiness is 503 with SERVICE.NOT_READY and no detail of any check (and no admin token can be checked)', async () => {
    await t.database.goDown();
    let down: Awaited<ReturnType<typeof callApi>>;
    let details: Awaited<ReturnType<typeof callApi>>;
    try {
      down = await callApi(t.baseUrl, 'GET', '/health/ready');
      details = await callApi(t.baseUrl, 'GET', '/health/details', { token: admin });
    } finally {
      await t.database.comeBack();
    }

    expect(down.status).toBe(503);
    expect(down.body).toEqual({
      status: 503,
      message: 'Service Unavailable',
      data: null,
      error: {
        id: expect.any(String),
        code: 'SERVICE.NOT_READY',
        message: 'The service is not ready',
        details: expect.any(String),
        doc_url: `${t.baseUrl}/reference/errors#service-not-ready`,
      },
    });
    expect(JSON.stringify(down.body)).not.toMatch(ANY_DETAIL);
    expect(down.body.error!.details).toContain('/health/details');
    expect(details.status).toBe(503);
    // The use of an admin path is audited, admitted or refused: its refusal (the token could not be looked up) could not be recorded either.
    expect(details.body.error!.code).toBe('AUDIT.UNAVAILABLE');
    expect((await callApi(t.baseUrl, 'GET', '/health/ready')).status).toBe(200);
  });
});

describe('readiness on a connection of its own', () => {
  it('when every connection of the service’s pool is busy, however long, then readiness still answers 200', async () => {
    const t = await startTestApp({ DATABASE_POOL_SIZE: '2' });
    // Both pool connections wait on a lock the owner holds, for as long as it holds it: busy with no clock involved.
    const holder = new Client({ connectionString: t.database.ownerUrl });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(4242)');
      const held = [t.dataSource.query('SELECT pg_advisory_xact_lock_shared(4242)'), t.dataSource.query('SELECT pg_advisory_xact_lock_shared(4242)')];
      await waitFor(
        async () =>
          (
            await t.asOwner<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_advisory_xact_lock_shared(4242)' AND wait_event_type = 'Lock'`,
            )
          )[0].n === 2,
        { timeoutMs: 30_000, what: 'both pool connections to be busy' },
      );

      const ready = await callApi(t.baseUrl, 'GET', '/health/ready');

      expect(ready.status).toBe(200);
      await holder.query('SELECT pg_advisory_unlock(4242)');
      await Promise.all(held);
    } finally {
      await holder.end();
      await t.close();
    }
  });
});
