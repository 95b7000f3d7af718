import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf, wholeAuditLog } from '../support/audit';

interface Envelope {
  status: number;
  data: Record<string, unknown> | null;
  error: { id: string; message: string; fields?: { field: string; message: string }[] } | null;
}

describe('audit log', () => {
  let t: TestApp;
  let admin: string;
  let partner: string;

  async function call(path: string, token?: string, requestId = randomUUID()) {
    const response = await fetch(`${t.baseUrl}${path}`, {
      headers: { 'x-request-id': requestId, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Envelope, requestId };
  }

  beforeAll(async () => {
    t = await startTestApp();
    admin = await t.createClient('admin', { name: 'support-desk' });
    partner = await t.createClient('partner', { name: 'ios-app', tenant: 'acme' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('one terminal event per request', () => {
    it('when a request succeeds, then exactly one succeeded event names the client, the origin and the route', async () => {
      const { status, requestId } = await call('/api/v1/me', partner);

      expect(status).toBe(200);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        operation: 'client.read',
        phase: 'succeeded',
        http_status: 200,
        client_name: 'ios-app',
        tenant: 'acme',
        source_ip: '127.0.0.1',
        http_method: 'GET',
        route: '/api/v1/me',
        error_id: null,
      });
      expect(events[0].latency_ms).toEqual(expect.any(Number));
    });

    it.each([
      ['no token', undefined],
      ['an unknown token', 'pgw_' + 'A'.repeat(43)],
    ])('when a request has %s, then one auth.rejected event with the error id and the source ip, and no token', async (_, token) => {
      const { status, body, requestId } = await call('/api/v1/me', token);

      expect(status).toBe(401);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        operation: 'auth.rejected',
        phase: 'rejected',
        http_status: 401,
        error_id: body.error!.id,
        source_ip: '127.0.0.1',
        client_id: null,
      });
      if (token) expect(await wholeAuditLog(t.dataSource)).not.toContain(token);
    });

    it('when a valid token is used, then the token is in no column of the audit log', async () => {
      await call('/api/v1/me', partner);

      const everything = await wholeAuditLog(t.dataSource);
      expect(everything).not.toContain(partner);
      expect(everything).not.toContain(partner.slice(4, 24));
    });

    it('when the role is wrong, then one rejected event under the route’s operation with the caller named', async () => {
      const { status, body, requestId } = await call('/api/v1/audit-events', partner);

      expect(status).toBe(403);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ operation: 'audit.query', phase: 'rejected', http_status: 403, client_name: 'ios-app', error_id: body.error!.id });
    });

    it('when validation fails, then one rejected event with the error id and code', async () => {
      const { status, body, requestId } = await call('/api/v1/audit-events?limit=0', admin);

      expect(status).toBe(400);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        operation: 'audit.query',
        phase: 'rejected',
        http_status: 400,
        error_id: body.error!.id,
        error_code: 'REQUEST.VALIDATION_FAILED',
      });
    });

    it('when the route does not exist, then one route.unknown event', async () => {
      const { status, requestId } = await call('/api/v1/no-such-thing', admin);

      expect(status).toBe(404);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ operation: 'route.unknown', phase: 'rejected', http_status: 404, route: null });
    });

    it('when a health check is called, then nothing is audited', async () => {
      const requestId = randomUUID();
      const response = await fetch(`${t.baseUrl}/health/live`, { headers: { 'x-request-id': requestId } });

      expect(response.status).toBe(200);
      expect(await auditEventsOf(t.dataSource, requestId)).toEqual([]);
    });
  });

  describe('append-only', () => {
    it.each([
      ['UPDATE', `UPDATE audit_events SET phase = 'succeeded'`],
      ['DELETE', 'DELETE FROM audit_events'],
      ['DELETE, with the purge flag set by hand', `SELECT set_config('partner_gateway.audit_purge', 'on', false); DELETE FROM audit_events`],
      ['TRUNCATE', 'TRUNCATE audit_events'],
      ['ALTER TABLE … DISABLE TRIGGER ALL', 'ALTER TABLE audit_events DISABLE TRIGGER ALL'],
      ['ALTER TABLE … DISABLE TRIGGER', 'ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only'],
      ['ALTER TABLE … RENAME', 'ALTER TABLE audit_events RENAME TO audit_events_old'],
      ['DROP TABLE', 'DROP TABLE audit_events'],
      ['SET session_replication_role = replica (triggers off)', 'SET session_replication_role = replica'],
      [
        'ALTER FUNCTION on the append-only trigger',
        'CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$',
      ],
    ])('when the service’s own role runs %s, then the database refuses it and the log is unchanged', async (_, sql) => {
      await call('/api/v1/me', partner);
      const before = await wholeAuditLog(t.dataSource);

      await expect(t.dataSource.query(sql)).rejects.toThrow(/permission denied|must be owner/);
      expect(await wholeAuditLog(t.dataSource)).toBe(before);
    });

    it.each([
      ['UPDATE', `UPDATE audit_events SET phase = 'succeeded'`],
      ['DELETE', 'DELETE FROM audit_events'],
      ['TRUNCATE', 'TRUNCATE audit_events'],
    ])('when even the owner runs %s on audit_events, then the append-only trigger refuses it', async (_, sql) => {
      await call('/api/v1/me', partner);
      const before = await wholeAuditLog(t.dataSource);

      await expect(t.asOwner(sql)).rejects.toThrow(/append-only/);
      expect(await wholeAuditLog(t.dataSource)).toBe(before);
    });

    it('when the service connects as its own role, then the readiness details report the audit log protected', async () => {
      const response = await fetch(`${t.baseUrl}/health/details`, { headers: { authorization: `Bearer ${admin}` } });
      const body = (await response.json()) as { data: { details: { auditLog: unknown } } };

      expect(body.data.details.auditLog).toEqual({ status: 'up', protected: true });
      expect(t.logs.text).not.toContain('The audit log is not protected');
    });

    it('when a purge asks for less than a year, then the database refuses it', async () => {
      await expect(t.dataSource.query(`SELECT * FROM purge_sealed_audit_events(now() - interval '30 days', 100)`)).rejects.toThrow(
        /kept at least 400 days \(AUDIT_RETENTION_DAYS, never under 365\)/,
      );
    });
  });

  describe('fail closed', () => {
    it('when the database goes down, then requests answer 503 with Retry-After, and work again once it is back', async () => {
      await t.database.goDown();
      let down: Awaited<ReturnType<typeof call>>;
      try {
        down = await call('/api/v1/me', partner);
      } finally {
        await t.database.comeBack();
      }

      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(down.body.error!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.stringify(down.body)).not.toMatch(/ECONNREFUSED|accepting connections|SELECT/);
      // Nothing could be written; the log holds the event instead.
      expect(t.logs.text).toContain('Audit event could not be written');
      expect(t.logs.text).toContain(down.requestId);

      const back = await call('/api/v1/me', partner);
      expect(back.status).toBe(200);
      expect(await auditEventsOf(t.dataSource, back.requestId)).toHaveLength(1);
    });

    it('when only the audit table cannot be written, then 503 AUDIT.UNAVAILABLE, and recovery without a restart', async () => {
      await t.asOwner('ALTER TABLE audit_events RENAME TO audit_events_away');
      let refused: Awaited<ReturnType<typeof call>>;
      try {
        refused = await call('/api/v1/me', partner);
      } finally {
        await t.asOwner('ALTER TABLE audit_events_away RENAME TO audit_events');
      }

      expect(refused.status).toBe(503);
      expect(refused.body.error!.message).toMatch(/cannot record requests/);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await auditEventsOf(t.dataSource, refused.requestId)).toEqual([]);

      const back = await call('/api/v1/me', partner);
      expect(back.status).toBe(200);
    });
  });

  describe('with DATABASE_URL alone (no MIGRATIONS_DATABASE_URL)', () => {
    let oneRole: TestApp;

    beforeAll(async () => {
      oneRole = await startTestApp({}, { oneRole: true });
    });
    afterAll(async () => {
      await oneRole.close();
    });

    it('when the service’s role owns the audit log, then it still serves, says so in one warning at start-up, and the readiness details report it', async () => {
      const client = await oneRole.createClient('partner');
      const oneRoleAdmin = await oneRole.createClient('admin');

      const me = await fetch(`${oneRole.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${client}` } });
      const ready = (await (await fetch(`${oneRole.baseUrl}/health/details`, { headers: { authorization: `Bearer ${oneRoleAdmin}` } })).json()) as {
        data: { details: { auditLog: unknown } };
      };

      expect(me.status).toBe(200);
      expect(ready.data.details.auditLog).toEqual({ status: 'up', protected: false, reason: expect.stringMatching(/superuser|owner/) });
      const warnings = oneRole.logs.lines.filter((line) => String(line.msg).startsWith('The audit log is not protected'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 40, msg: expect.stringContaining('MIGRATIONS_DATABASE_URL') });
    });
  });
});
