import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';

interface AuditEventBody {
  id: string;
  occurred_at: string;
  operation: string;
  phase: string;
  reference: string | null;
  customer_id: string | null;
  error_id: string | null;
  upstream_error_id: string | null;
}
interface PageBody {
  events: AuditEventBody[];
  next_cursor: string | null;
}
interface Envelope<T> {
  status: number;
  data: T | null;
  error: { id: string; fields?: { field: string; message: string }[] } | null;
}

const ROWS = 3000;
const CUSTOMERS = [randomUUID(), randomUUID(), randomUUID()];

describe('GET /api/v1/audit-events', () => {
  let t: TestApp;
  let admin: string;
  let adminId: string;

  async function get<T>(path: string, token = admin) {
    const response = await fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, body: (await response.json()) as Envelope<T> };
  }

  async function count(where: string, params: unknown[] = []): Promise<number> {
    const rows: { n: string }[] = await t.dataSource.query(`SELECT count(*) AS n FROM audit_events WHERE request_id LIKE 'seed-%' AND ${where}`, params);
    return Number(rows[0].n);
  }

  beforeAll(async () => {
    t = await startTestApp();
    admin = await t.createClient('admin', { name: 'compliance' });
    const me = await get<{ id: string }>('/api/v1/me');
    adminId = me.body.data!.id;
    // A few thousand events over sixty days, many sharing a millisecond, so paging must be exact.
    // Dated by the owner: the service's role may not write occurred_at.
    await t.asOwner(
      `INSERT INTO audit_events (id, occurred_at, request_id, operation, phase, reference, customer_id, currency, http_status, upstream_error_id, client_id)
       SELECT gen_random_uuid(),
              timestamptz '2026-09-01T00:00:00Z' + ((i / 3) * interval '30 minutes'),
              'seed-' || i,
              (ARRAY['customer.create', 'balance.read', 'bank_account.create'])[1 + i % 3],
              (ARRAY['succeeded', 'rejected', 'failed', 'unknown'])[1 + i % 4],
              CASE WHEN i % 3 <> 1 THEN gen_random_uuid() END,
              ($1::uuid[])[1 + i % 3],
              CASE WHEN i % 3 = 2 THEN 'EUR' END,
              200,
              CASE WHEN i % 500 = 0 THEN 'UPS-ERR-' || i END,
              CASE WHEN i % 2 = 0 THEN $2::uuid END
       FROM generate_series(1, $3::int) AS i`,
      [CUSTOMERS, adminId, ROWS],
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('when every page is followed, then each event appears exactly once, newest first', async () => {
    const seen: AuditEventBody[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `/api/v1/audit-events?operation=balance.read&limit=137${cursor ? `&cursor=${cursor}` : ''}`;
      const { status, body } = await get<PageBody>(query);
      expect(status).toBe(200);
      seen.push(...body.data!.events);
      cursor = body.data!.next_cursor;
      pages += 1;
    } while (cursor);

    const expected = await count(`operation = 'balance.read'`);
    expect(seen).toHaveLength(expected);
    expect(new Set(seen.map((e) => e.id)).size).toBe(expected);
    expect(pages).toBe(Math.ceil(expected / 137));
    const times = seen.map((e) => Date.parse(e.occurred_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('when every page of events that share their time is followed, then each appears exactly once, newest first and by id within a time', async () => {
    const seen: AuditEventBody[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/api/v1/audit-events?client=${adminId}&to=2026-10-01&limit=137${cursor ? `&cursor=${cursor}` : ''}`;
      const { status, body } = await get<PageBody>(query);
      expect(status).toBe(200);
      seen.push(...body.data!.events);
      cursor = body.data!.next_cursor;
    } while (cursor);

    const expected: { id: string }[] = await t.dataSource.query(
      `SELECT id FROM audit_events WHERE request_id LIKE 'seed-%' AND client_id = $1 ORDER BY occurred_at DESC, id DESC`,
      [adminId],
    );
    expect(new Set(seen.map((e) => e.occurred_at)).size).toBeLessThan(seen.length);
    expect(seen.map((e) => e.id)).toEqual(expected.map((row) => row.id));
  });

  it('when filtered by customer and a date range, then exactly the matching events come back', async () => {
    const customer = CUSTOMERS[1];
    const { status, body } = await get<PageBody>(`/api/v1/audit-events?customer_id=${customer}&from=2026-09-10&to=2026-09-14T12:00:00Z&limit=500&reason=SUP-1`);

    expect(status).toBe(200);
    const expected = await count(`customer_id = $1 AND occurred_at >= '2026-09-10' AND occurred_at < '2026-09-14T12:00:00Z'`, [customer]);
    expect(expected).toBeGreaterThan(0);
    expect(body.data!.events).toHaveLength(expected);
    expect(body.data!.events.every((e) => e.customer_id === customer)).toBe(true);
  });

  it('when filtered by outcome and client, then only those come back', async () => {
    const { body } = await get<PageBody>(`/api/v1/audit-events?outcome=unknown&client=${adminId}&limit=500`);

    expect(body.data!.events).toHaveLength(await count(`phase = 'unknown' AND client_id = $1`, [adminId]));
    expect(body.data!.events.every((e) => e.phase === 'unknown')).toBe(true);
  });

  it('when searched by reference, then the events of that transaction come back', async () => {
    const rows: { reference: string }[] = await t.dataSource.query(`SELECT reference FROM audit_events WHERE request_id = 'seed-42'`);

    const { body } = await get<PageBody>(`/api/v1/audit-events?reference=${rows[0].reference}&reason=SUP-2`);

    expect(body.data!.events.map((e) => e.reference)).toEqual([rows[0].reference]);
  });

  it('when searched by the provider’s error id, then its event comes back', async () => {
    const { body } = await get<PageBody>('/api/v1/audit-events?error_id=UPS-ERR-1500');

    expect(body.data!.events).toHaveLength(1);
    expect(body.data!.events[0].upstream_error_id).toBe('UPS-ERR-1500');
  });

  it('when searched by the error id a caller was shown, then its one event comes back, and GET by id returns it', async () => {
    const failed = await fetch(`${t.baseUrl}/api/v1/me`, { headers: { authorization: 'Bearer nope' } });
    const errorId = ((await failed.json()) as Envelope<never>).error!.id;

    const { body } = await get<PageBody>(`/api/v1/audit-events?error_id=${errorId}`);
    expect(body.data!.events).toHaveLength(1);
    expect(body.data!.events[0]).toMatchObject({ operation: 'auth.rejected', error_id: errorId });

    const one = await get<AuditEventBody>(`/api/v1/audit-events/${body.data!.events[0].id}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ id: body.data!.events[0].id, error_id: errorId });
  });

  it('when an event is read by id, then the answer is the one the search gives, with every column filled or every nullable one empty', async () => {
    const [full, bare, reference] = [randomUUID(), randomUUID(), randomUUID()];
    await t.asOwner(
      `INSERT INTO audit_events (id, request_id, client_id, caller_kind, client_name, tenant, operation, phase, http_method, route, reference, customer_id,
                                 currency, http_status, upstream_status, error_id, error_code, upstream_error_id, error_message, latency_ms,
                                 upstream_latency_ms, source_ip, replayed, trace_id, staff_id, staff_roles, access_reason, break_glass, upstream_attempts)
       VALUES ($1, 'by-id-full', $4, 'staff', 'support desk', 'acme', 'bank_account.create', 'failed', 'POST', '/api/v1/bank-accounts', $3, $5,
               'EUR', 502, 500, $6, 'UPSTREAM.FAILED', 'UPS-7', 'The provider failed', 812,
               790, '203.0.113.9', true, '0af7651916cd43dd8448eb211c80319c', 'staff-7', 'support,compliance', 'TICKET-9', true,
               '[{"retry": 0, "status": 500, "latency_ms": 400, "error_id": "UPS-7"}, {"retry": 1, "failure": "timeout", "latency_ms": 390}]'),
              ($2, 'by-id-bare', NULL, NULL, NULL, NULL, 'customer.create', 'succeeded', NULL, NULL, $3, NULL,
               NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
               NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL)`,
      [full, bare, reference, randomUUID(), randomUUID(), randomUUID()],
    );

    const page = await get<PageBody>(`/api/v1/audit-events?reference=${reference}&reason=TICKET-1`);
    expect(page.body.data!.events.map((event) => event.id).sort()).toEqual([full, bare].sort());
    expect(page.body.data!.events.find((event) => event.id === full)).toMatchObject({ upstream_error_id: 'UPS-7', customer_id: expect.any(String) });
    for (const event of page.body.data!.events) {
      const one = await get<AuditEventBody>(`/api/v1/audit-events/${event.id}`);

      expect({ status: one.status, event: one.body.data }).toEqual({ status: 200, event });
    }
  });

  it('when an admin reads the log, then the read itself is audited as audit.query', async () => {
    const requestId = randomUUID();
    await fetch(`${t.baseUrl}/api/v1/audit-events?limit=1`, { headers: { authorization: `Bearer ${admin}`, 'x-request-id': requestId } });

    const events = await auditEventsOf(t.dataSource, requestId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ operation: 'audit.query', phase: 'succeeded', client_name: 'compliance' });
  });

  it.each([
    ['reference=not-a-uuid', 'reference'],
    ['customer_id=123', 'customer_id'],
    ['client=abc', 'client'],
    ['from=2026-02-30', 'from'],
    ['to=yesterday', 'to'],
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['limit=ten', 'limit'],
    ['outcome=maybe', 'outcome'],
    ['operation=drop.table', 'operation'],
    ['error_id=%3Cscript%3E', 'error_id'],
    ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ['from=2026-10-02&to=2026-10-01', 'from'],
    ['colour=blue', 'colour'],
  ])('when the filter is %s, then 400 naming %s', async (query, field) => {
    const { status, body } = await get<PageBody>(`/api/v1/audit-events?${query}`);

    expect(status).toBe(400);
    expect(body.error!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.error!.fields?.map((f) => f.field)).toContain(field);
  });

  it('when a cursor names a time PostgreSQL cannot hold (year 0000), then 400 naming cursor, not 500', async () => {
    const cursor = Buffer.from(JSON.stringify(['0000-12-31T23:59:59.999999Z', randomUUID()]), 'utf8').toString('base64url');
    const { status, body } = await get<PageBody>(`/api/v1/audit-events?cursor=${cursor}`);

    expect({ status, fields: body.error?.fields?.map((f) => f.field) }).toEqual({ status: 400, fields: ['cursor'] });
  });

  it('when an event id is not a UUID, then 400; when it is unknown, then 404', async () => {
    expect((await get('/api/v1/audit-events/42')).status).toBe(400);
    expect((await get(`/api/v1/audit-events/${randomUUID()}`)).status).toBe(404);
  });

  it('when a partner token asks, then 403', async () => {
    const partner = await t.createClient('partner');

    expect((await get('/api/v1/audit-events', partner)).status).toBe(403);
    expect((await get(`/api/v1/audit-events/${randomUUID()}`, partner)).status).toBe(403);
  });
});
