import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf, wholeAuditLog } from '../support/audit';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { rawExchange, requestText } from '../support/raw-http';
import { journal } from '../support/sandbox';
import { waitFor } from '../support/wait-for';

/**
 * Every route, spelled the ways an attacker would spell it, sent byte for byte. Whatever the
 * spelling, a request under /api/v1 leaves exactly one terminal audit event, and an admin-only
 * route stays admin-only (live mode).
 */
type Spelling = { name: string; spell: (path: string) => string; expect: 'served' | 'refused' | 'not_found' };

/** The first letter of the path, percent-encoded (`/api` → `/%61pi`). */
const encodeFirstLetter = (path: string) => path.replace(/[a-z]/, (letter) => `%${letter.charCodeAt(0).toString(16)}`);

const SPELLINGS: Spelling[] = [
  { name: 'as documented', spell: (p) => p, expect: 'served' },
  { name: 'a percent-encoded letter', spell: encodeFirstLetter, expect: 'served' },
  { name: 'a percent-encoded digit', spell: (p) => p.replace('v1', 'v%31'), expect: 'served' },
  { name: 'lower-case escapes of every letter', spell: (p) => p.replace(/[a-z]/g, (l) => `%${l.charCodeAt(0).toString(16)}`), expect: 'served' },
  { name: 'the absolute form', spell: (p) => `http://evil.example${p}`, expect: 'served' },
  { name: 'the absolute form with another scheme and a port', spell: (p) => `HTTPS://evil.example:8443${p}`, expect: 'served' },
  { name: 'a double slash in front', spell: (p) => `/${p}`, expect: 'refused' },
  { name: 'a double slash inside', spell: (p) => p.replace('/v1/', '/v1//'), expect: 'refused' },
  { name: 'a dot segment', spell: (p) => p.replace('/v1/', '/v1/./'), expect: 'refused' },
  { name: 'a dot-dot segment', spell: (p) => p.replace('/v1/', '/v1/x/../'), expect: 'refused' },
  { name: 'an encoded dot-dot segment', spell: (p) => p.replace('/v1/', '/v1/x/%2e%2E/'), expect: 'refused' },
  { name: 'a broken escape', spell: (p) => `${p}%ZZ`, expect: 'refused' },
  { name: 'upper case', spell: (p) => p.replace('/api/v1', '/API/V1'), expect: 'not_found' },
  { name: 'a trailing slash', spell: (p) => p.replace(/(\?|$)/, '/$1'), expect: 'not_found' },
];

interface Route {
  readonly method: 'GET' | 'POST';
  readonly path: () => string;
  readonly role: 'partner' | 'admin';
  readonly body?: () => Record<string, unknown>;
  readonly status: number;
}

describe('The edge: every spelling of every route', () => {
  let sut: TestApp;
  let partner: string;
  let admin: string;
  let customerId: string;
  let eventId: string;

  const routes: Record<string, Route> = {
    'GET /api/v1/me': { method: 'GET', path: () => '/api/v1/me', role: 'partner', status: 200 },
    'GET /api/v1/customers/{id}/balance': { method: 'GET', path: () => `/api/v1/customers/${customerId}/balance`, role: 'partner', status: 200 },
    'POST /api/v1/customers': { method: 'POST', path: () => '/api/v1/customers', role: 'partner', body: () => buildCustomerRequest(), status: 201 },
    'POST /api/v1/bank-accounts': {
      method: 'POST',
      path: () => '/api/v1/bank-accounts',
      role: 'partner',
      body: () => buildBankAccountRequest({ customer_id: customerId }),
      status: 201,
    },
    'GET /api/v1/audit-events': { method: 'GET', path: () => '/api/v1/audit-events?limit=1', role: 'admin', status: 200 },
    'GET /api/v1/audit-events/{id}': { method: 'GET', path: () => `/api/v1/audit-events/${eventId}`, role: 'admin', status: 200 },
  };

  beforeAll(async () => {
    sut = await startTestApp();
    partner = await sut.createClient('partner');
    admin = await sut.createClient('admin');
    customerId = await createCustomer(sut.baseUrl, partner);
    const page = await callApi<{ events: { id: string }[] }>(sut.baseUrl, 'GET', '/api/v1/audit-events?limit=1', { token: admin });
    eventId = page.body.data!.events[0].id;
  });

  afterAll(async () => {
    await sut.close();
  });

  const cases = Object.keys(routes).flatMap((route) => SPELLINGS.map((spelling) => [route, spelling.name, spelling] as const));

  it.each(cases)('%s spelled with %s: the documented answer or a refusal, and exactly one terminal audit event', async (routeName, _name, spelling) => {
    const route = routes[routeName];
    const requestId = randomUUID();
    const body = route.body ? JSON.stringify(route.body()) : undefined;
    const target = spelling.spell(route.path());
    const headers: Record<string, string> = { Authorization: `Bearer ${route.role === 'admin' ? admin : partner}`, 'X-Request-Id': requestId };
    if (body) headers['Content-Type'] = 'application/json';

    const answer = await rawExchange(sut.baseUrl, requestText(route.method, target, headers, body));

    const expected = { served: route.status, refused: 400, not_found: 404 }[spelling.expect];
    expect({ target, status: answer.status }).toEqual({ target, status: expected });
    expect(answer.body?.status).toBe(expected);
    if (expected >= 400) expect(answer.body?.error?.id).toMatch(/^[0-9a-f-]{36}$/);
    const events = await waitFor(async () => {
      const all = await auditEventsOf(sut.dataSource, requestId);
      return all.some((event) => event.phase !== 'attempted') ? all : undefined;
    });
    const terminal = (events ?? []).filter((event) => event.phase !== 'attempted');
    expect(terminal).toHaveLength(1);
    expect(terminal[0]).toMatchObject({ http_status: expected, error_id: expected >= 400 ? answer.body?.error?.id : null });
  });

  it('when a bank account is opened through a percent-encoded path, then it has its attempted and its succeeded event', async () => {
    const requestId = randomUUID();
    const body = JSON.stringify(buildBankAccountRequest({ customer_id: customerId }));

    const answer = await rawExchange(
      sut.baseUrl,
      requestText(
        'POST',
        '/%61pi/v1/bank-accounts',
        { Authorization: `Bearer ${partner}`, 'X-Request-Id': requestId, 'Content-Type': 'application/json' },
        body,
      ),
    );

    expect(answer.status).toBe(201);
    expect((await auditEventsOf(sut.dataSource, requestId)).map((event) => [event.phase, event.route])).toEqual([
      ['attempted', null],
      ['succeeded', '/api/v1/bank-accounts'],
    ]);
  });

  it('when an unknown route under /api/v1 carries a query string, then no value of it is stored or logged', async () => {
    const requestId = randomUUID();
    const logs = sut.logs;

    const answer = await rawExchange(
      sut.baseUrl,
      requestText('GET', '/api/v1/nope?phone=%2B4915123456789&dob=1990-12-10&token=pgw_leakedtoken', {
        Authorization: `Bearer ${partner}`,
        'X-Request-Id': requestId,
      }),
    );

    expect(answer.status).toBe(404);
    expect(answer.text).not.toMatch(/4915123456789|1990-12-10|pgw_leakedtoken|phone|\/nope/);
    const [event] = await auditEventsOf(sut.dataSource, requestId);
    expect(event).toMatchObject({ operation: 'route.unknown', http_status: 404, error_message: 'No such route' });
    expect(await wholeAuditLog(sut.dataSource)).not.toMatch(/4915123456789|pgw_leakedtoken|dob=/);
    await waitFor(() => logs.text.includes(requestId));
    expect(logs.text).toContain(requestId);
    expect(logs.text).not.toMatch(/4915123456789|1990-12-10|pgw_leakedtoken|dob=|phone=/);
  });

  it('when a refused spelling of a POST reaches the edge, then nothing is sent to the provider', async () => {
    const body = buildCustomerRequest();

    const answer = await rawExchange(
      sut.baseUrl,
      requestText('POST', '/api/v1/./customers', { Authorization: `Bearer ${partner}`, 'Content-Type': 'application/json' }, JSON.stringify(body)),
    );

    expect(answer.status).toBe(400);
    expect(answer.body?.error?.message).toBe('The request path has empty or dot segments; send the path as the API documents it');
    expect((await journal(sut.sandbox)).filter((entry) => entry.reference === body.reference)).toEqual([]);
  });
});

describe('The edge: admin-only routes in live mode, however spelled', () => {
  let sut: TestApp;
  let admin: string;
  let partner: string;

  beforeAll(async () => {
    sut = await startTestApp();
    admin = await sut.createClient('admin');
    partner = await sut.createClient('partner');
  });

  afterAll(async () => {
    await sut.close();
  });

  const ADMIN_ROUTES = ['/docs', '/docs-json', '/docs-yaml', '/metrics'];
  const spellings = ADMIN_ROUTES.flatMap((path) => SPELLINGS.filter((s) => s.expect === 'served').map((s) => [path, s.name, s.spell(path)] as const));

  it.each(spellings)('%s spelled with %s (%s): without a token 401, with a partner token 403, never served', async (_path, _name, target) => {
    const anonymous = await rawExchange(sut.baseUrl, requestText('GET', target));
    const asPartner = await rawExchange(sut.baseUrl, requestText('GET', target, { Authorization: `Bearer ${partner}` }));

    expect(anonymous.status).toBe(401);
    expect(anonymous.body?.error?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(asPartner.status).toBe(403);
    expect(`${anonymous.text}${asPartner.text}`).not.toMatch(/openapi|process_cpu|swagger-ui/i);
  });

  it.each(spellings)('%s spelled with %s (%s): with the admin token, served', async (_path, _name, target) => {
    const answer = await rawExchange(sut.baseUrl, requestText('GET', target, { Authorization: `Bearer ${admin}` }));

    expect(answer.status).toBe(200);
  });

  it.each(ADMIN_ROUTES.flatMap((path) => [`/${path}`, path.replace('/', '/./'), `${path}%ZZ`, path.toUpperCase(), `${path}/..`]))(
    'when %s is asked for without a token, then it is refused or not found, never served',
    async (target) => {
      const answer = await rawExchange(sut.baseUrl, requestText('GET', target));

      expect([400, 401, 404]).toContain(answer.status);
      expect(answer.body?.error?.id).toMatch(/^[0-9a-f-]{36}$/);
    },
  );
});
