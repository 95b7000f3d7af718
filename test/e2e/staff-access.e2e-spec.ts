import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import {
  DevIdentityProvider,
  DEV_CLIENTS,
  DEV_STAFF_SCOPE,
  asTrustedStaffProvider,
  startDevIdentityProvider,
} from '../../dev/identity-provider/dev-identity-provider';
import { devLogin } from '../../dev/identity-provider/dev-login';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { callApi, createCustomer } from '../support/http';
import { newIssuerKey, TEST_AUDIENCE, TestIssuer } from '../support/oidc';

const STAFF_AUDIENCE = 'urn:partner-gateway:staff';

interface Operation {
  readonly security?: readonly Record<string, string[]>[];
  readonly 'x-staff-roles'?: readonly string[];
}
type Document = { paths: Record<string, Record<string, Operation>> };

/**
 * The staff table (docs/security.md, "Staff"): every operation of the served document and the
 * staff roles that may call it. An operation not listed refuses every staff member. The served
 * document must show the same table (`x-staff-roles`), and each role must reach exactly its rows.
 */
const STAFF_TABLE: Record<string, readonly string[]> = {
  'GET /api/v1/audit-events': ['support', 'compliance'],
  'GET /api/v1/audit-events/{id}': ['support', 'compliance'],
  'GET /api/v1/unresolved-calls': ['support', 'operator'],
  'GET /api/v1/audit-checkpoints': ['compliance'],
  'GET /api/v1/audit-access-report': ['compliance'],
  'GET /api/v1/clients': ['operator'],
  'GET /api/v1/end-user-sessions': ['operator'],
  'POST /api/v1/end-user-sessions/end': ['operator'],
  'GET /health/details': ['operator'],
};
const ROLES = ['support', 'compliance', 'operator'] as const;

describe('staff access: the company’s sign-in, roles, a second factor and a reason', () => {
  /** The company's provider (hand-made tokens), and the partners' end users' one. */
  let company: TestIssuer;
  let partners: TestIssuer;
  let t: TestApp;
  let admin: string;
  let partner: string;
  let operations: { key: string; method: 'GET' | 'POST'; path: string; staffRoles: readonly string[] | undefined }[];

  /** A staff token as the company's provider signs it: `groups` in its `gw_groups` claim (mapped by STAFF_ROLE_MAP), with a second factor unless said. */
  const staffToken = (groups: string[], claims: Record<string, unknown> = {}) =>
    company.token({
      aud: STAFF_AUDIENCE,
      sub: `staff-${groups.join('-') || 'none'}`,
      name: 'Robin Staff',
      gw_groups: groups,
      amr: ['pwd', 'hwk'],
      scope: undefined,
      ...claims,
    });
  const GROUP_OF = { support: 'GW-Support', compliance: 'GW-Compliance', operator: 'GW-Ops' } as const;

  beforeAll(async () => {
    company = await TestIssuer.start();
    partners = await TestIssuer.start();
    t = await startTestApp({
      OIDC_ISSUER: partners.issuer,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
      STAFF_OIDC_ISSUER: company.issuer,
      STAFF_OIDC_AUDIENCE: STAFF_AUDIENCE,
      STAFF_ROLES_CLAIM: 'gw_groups',
      STAFF_ROLE_MAP: JSON.stringify({ 'GW-Support': 'support', 'GW-Compliance': 'compliance', 'GW-Ops': ['operator'] }),
    });
    admin = await t.createClient('admin');
    partner = await t.createClient('partner');
    const served = (await (await fetch(`${t.baseUrl}/docs-json`, { headers: { authorization: `Bearer ${admin}` } })).json()) as Document;
    operations = Object.entries(served.paths).flatMap(([path, byMethod]) =>
      Object.entries(byMethod)
        .filter(([, operation]) => (operation.security ?? []).length > 0)
        .map(([method, operation]) => ({
          key: `${method.toUpperCase()} ${path}`,
          method: method.toUpperCase() as 'GET' | 'POST',
          path: path.replace(/\{[^}]+\}/g, randomUUID()),
          staffRoles: operation['x-staff-roles'],
        })),
    );
  });
  afterAll(async () => {
    await t?.close();
    await company?.close();
    await partners?.close();
  });

  it('when the served document is read, then each operation shows the staff roles of the table, and no other operation names any', () => {
    const shown = Object.fromEntries(operations.filter((operation) => operation.staffRoles).map((operation) => [operation.key, [...operation.staffRoles!]]));
    expect(shown).toEqual(STAFF_TABLE);
    expect(operations.length).toBeGreaterThan(Object.keys(STAFF_TABLE).length);
  });

  it.each(ROLES)(
    'when a staff member with the %s role (and a second factor) calls every operation, then exactly the table’s rows for the role are served',
    async (role) => {
      const token = await staffToken([GROUP_OF[role]]);
      const answers = await Promise.all(
        operations.map(async (operation) => ({
          operation,
          answer: await callApi(t.baseUrl, operation.method, operation.path, { token, body: operation.method === 'POST' ? {} : undefined }),
        })),
      );
      const reached = answers.filter(({ answer }) => answer.status !== 401 && answer.status !== 403).map(({ operation }) => operation.key);
      const refused = answers
        .filter(({ answer }) => answer.status === 403 && answer.body.error?.code === 'AUTH.FORBIDDEN')
        .map(({ operation }) => operation.key);

      const expected = Object.keys(STAFF_TABLE).filter((key) => STAFF_TABLE[key].includes(role));
      expect(reached.sort()).toEqual(expected.sort());
      expect(refused.sort()).toEqual(
        operations
          .map((operation) => operation.key)
          .filter((key) => !expected.includes(key))
          .sort(),
      );
    },
  );

  it('when a staff member holding every role signed in with a password only, then every staff operation answers 401 AUTH.MFA_REQUIRED with an RFC 9470 challenge', async () => {
    const token = await staffToken(Object.values(GROUP_OF), { amr: ['pwd'] });
    const staffOperations = operations.filter((operation) => operation.staffRoles);
    const answers = await Promise.all(
      staffOperations.map((operation) => callApi(t.baseUrl, operation.method, operation.path, { token, body: operation.method === 'POST' ? {} : undefined })),
    );

    expect(answers.map((answer) => [answer.status, answer.body.error?.code])).toEqual(staffOperations.map(() => [401, 'AUTH.MFA_REQUIRED']));
    expect(
      answers.every((answer) => /^Bearer realm="partner-gateway", error="insufficient_user_authentication"/.test(answer.headers.get('www-authenticate') ?? '')),
    ).toBe(true);
    expect(answers.every((answer) => typeof answer.body.error?.id === 'string')).toBe(true);
  });

  it('when a partner token, an end user’s token or a staff token without a mapped group calls a staff operation, then 403; a staff token on a partner operation, 403', async () => {
    const endUser = await partners.token({ sub: 'ada' });
    const ungrouped = await staffToken(['Everyone']);
    const support = await staffToken([GROUP_OF.support]);
    const customer = await createCustomer(t.baseUrl, partner);

    const onStaff = await Promise.all([partner, endUser, ungrouped].map((token) => callApi(t.baseUrl, 'GET', '/api/v1/audit-events?limit=1', { token })));
    const onPartner = await Promise.all([
      callApi(t.baseUrl, 'GET', `/api/v1/customers/${customer}/balance`, { token: support }),
      callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: support, body: {} }),
      callApi(t.baseUrl, 'GET', '/api/v1/me', { token: support }),
    ]);

    expect(onStaff.map((answer) => [answer.status, answer.body.error?.code])).toEqual([
      [403, 'AUTH.FORBIDDEN'],
      [403, 'AUTH.FORBIDDEN'],
      [403, 'AUTH.FORBIDDEN'],
    ]);
    expect(onPartner.map((answer) => [answer.status, answer.body.error?.details])).toEqual([
      [403, 'Staff tokens cannot call this endpoint'],
      [403, 'Staff tokens cannot call this endpoint'],
      [403, 'Staff tokens cannot call this endpoint'],
    ]);
  });

  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const hostile: [string, () => Promise<string>][] = [
    ['signed by the end users’ provider for the staff audience', () => partners.token({ aud: STAFF_AUDIENCE, gw_groups: ['GW-Ops'], amr: ['mfa'] })],
    ['from the company’s provider for the end users’ audience', () => staffToken([GROUP_OF.operator], { aud: TEST_AUDIENCE })],
    [
      'signed by a key the company does not hold, under its kid',
      async () => company.token({ aud: STAFF_AUDIENCE, gw_groups: ['GW-Ops'], amr: ['mfa'] }, { key: await newIssuerKey(company.keys[0].publicJwk.kid) }),
    ],
    [
      'expired',
      () => company.token({ aud: STAFF_AUDIENCE, gw_groups: ['GW-Ops'], amr: ['mfa'] }, { now: Math.floor(Date.now() / 1000) - 900, lifetimeSeconds: 300 }),
    ],
    ['typed as an ID token', () => company.token({ aud: STAFF_AUDIENCE, gw_groups: ['GW-Ops'], amr: ['mfa'] }, { header: { typ: 'JWT' } })],
    [
      'unsigned (alg none)',
      async () =>
        `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64({ iss: company.issuer, aud: STAFF_AUDIENCE, sub: 'x', gw_groups: ['GW-Ops'], amr: ['mfa'], iat: 1, exp: 9e9 })}.`,
    ],
    [
      'signed with HMAC, the public key as the secret',
      async () => {
        const now = Math.floor(Date.now() / 1000);
        const head = `${b64({ alg: 'HS256', typ: 'at+jwt', kid: company.keys[0].publicJwk.kid })}.${b64({ iss: company.issuer, aud: STAFF_AUDIENCE, sub: 'x', gw_groups: ['GW-Ops'], amr: ['mfa'], iat: now, exp: now + 60 })}`;
        return `${head}.${createHmac('sha256', JSON.stringify(company.keys[0].publicJwk)).update(head).digest('base64url')}`;
      },
    ],
  ];
  it.each(hostile)('when a staff token is %s, then 401 AUTH.INVALID_TOKEN and nothing is served', async (_, make) => {
    const answer = await callApi(t.baseUrl, 'GET', '/api/v1/clients', { token: await make() });
    expect([answer.status, answer.body.error?.code]).toEqual([401, 'AUTH.INVALID_TOKEN']);
  });

  it('when support searches about a customer without a reason, then 400 naming `reason`; with one, the search’s audit event names the person, the role used and the reason', async () => {
    const token = await staffToken([GROUP_OF.support], { sub: 'emp-4711', name: 'Sam Support' });
    const customer = await createCustomer(t.baseUrl, partner);

    const without = await callApi(t.baseUrl, 'GET', `/api/v1/audit-events?customer_id=${customer}`, { token });
    const blank = await callApi(t.baseUrl, 'GET', `/api/v1/audit-events?customer_id=${customer}&reason=${encodeURIComponent('   ')}`, { token });
    const withReason = await callApi<{ events: { operation: string }[] }>(
      t.baseUrl,
      'GET',
      `/api/v1/audit-events?customer_id=${customer}&reason=${encodeURIComponent('SUP-1234 card declined')}`,
      { token, requestId: randomUUID() },
    );

    expect([without.status, without.body.error?.fields]).toEqual([400, [{ field: 'reason', message: expect.stringMatching(/^reason is required/) }]]);
    expect(blank.status).toBe(400);
    expect(withReason.status).toBe(200);
    // The customer's own events, not the searches about them.
    expect(withReason.body.data!.events.map((event) => event.operation)).toEqual(['customer.create']);
    const [event] = await auditEventsOf(t.dataSource, withReason.headers.get('x-request-id')!);
    expect(event).toMatchObject({
      operation: 'audit.query',
      caller_kind: 'staff',
      staff_id: 'emp-4711',
      client_name: 'Sam Support',
      client_id: null,
      tenant: null,
      staff_roles: 'support',
      access_reason: 'SUP-1234 card declined',
      customer_id: customer,
      break_glass: null,
    });
    // Compliance finds what the person looked at, by their id.
    const compliance = await staffToken([GROUP_OF.compliance]);
    const theirs = await callApi<{ events: { staff_id: string; access_reason: string | null }[] }>(
      t.baseUrl,
      'GET',
      '/api/v1/audit-events?staff=emp-4711&operation=audit.query&limit=10&reason=ACCESS-REVIEW-Q4',
      { token: compliance },
    );
    expect(theirs.body.data!.events.map((found) => [found.staff_id, found.access_reason])).toEqual([
      ['emp-4711', 'SUP-1234 card declined'],
      ['emp-4711', null],
      ['emp-4711', null],
    ]);

    // The access review's report: by person and by customer, over a period.
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const report = await callApi<{
      people: Record<string, unknown>[];
      customers: { customer_id: string; searches: number; people: Record<string, unknown>[] }[];
    }>(t.baseUrl, 'GET', `/api/v1/audit-access-report?from=${from}&to=${to}`, { token: compliance });
    expect(report.status).toBe(200);
    expect(report.body.data!.people).toContainEqual(
      // The two refused searches (400) showed nothing: not counted.
      expect.objectContaining({ caller_kind: 'staff', id: 'emp-4711', name: 'Sam Support', searches: 1, with_reason: 1, customers: 1, references: 0 }),
    );
    expect(report.body.data!.customers.find((found) => found.customer_id === customer)).toEqual({
      customer_id: customer,
      searches: 1,
      people: [{ caller_kind: 'staff', id: 'emp-4711', name: 'Sam Support', searches: 1 }],
    });
    expect(report.body.data).toMatchObject({ truncated: false });
    const tooLong = await callApi(t.baseUrl, 'GET', `/api/v1/audit-access-report?from=2025-01-01&to=2026-06-01`, { token: compliance });
    expect([tooLong.status, tooLong.body.error?.code]).toEqual([400, 'AUDIT.INVALID_RANGE']);
    // ISO 8601's week and ordinal dates, which JavaScript's Date cannot read: refused as input, never a 500.
    for (const odd of ['2026-W01-1', '2026-183', '2026-11-01T09:30:00']) {
      const answer = await callApi(t.baseUrl, 'GET', `/api/v1/audit-access-report?from=${odd}&to=2026-12-01`, { token: compliance });
      const search = await callApi(t.baseUrl, 'GET', `/api/v1/audit-events?from=${odd}`, { token: compliance });
      expect([answer.status, answer.body.error?.fields?.[0]?.field, search.status]).toEqual([400, 'from', 400]);
    }
  });

  it('when a staff member browses the audit log or reads one event, then a reason is required too; an admin token browses without one', async () => {
    const token = await staffToken([GROUP_OF.support], { sub: 'emp-0815' });
    const customer = await createCustomer(t.baseUrl, partner);
    const created = await callApi<{ events: { id: string }[] }>(t.baseUrl, 'GET', `/api/v1/audit-events?customer_id=${customer}&reason=SUP-2`, { token });
    const eventId = created.body.data!.events[0].id;

    const browse = await callApi(t.baseUrl, 'GET', '/api/v1/audit-events?limit=5', { token });
    const oneWithout = await callApi(t.baseUrl, 'GET', `/api/v1/audit-events/${eventId}`, { token });
    const oneWith = await callApi(t.baseUrl, 'GET', `/api/v1/audit-events/${eventId}?reason=SUP-2`, { token, requestId: randomUUID() });
    const adminBrowse = await callApi(t.baseUrl, 'GET', '/api/v1/audit-events?limit=5', { token: admin });

    expect([browse.status, browse.body.error?.fields?.[0]?.field]).toEqual([400, 'reason']);
    expect([oneWithout.status, oneWithout.body.error?.fields?.[0]?.field]).toEqual([400, 'reason']);
    expect(oneWith.status).toBe(200);
    expect(adminBrowse.status).toBe(200);
    // The read of one event names what it looked at: that event's customer.
    const [read] = await auditEventsOf(t.dataSource, oneWith.headers.get('x-request-id')!);
    expect(read).toMatchObject({ operation: 'audit.query', staff_id: 'emp-0815', access_reason: 'SUP-2', customer_id: customer });
  });

  it('when an admin client token calls, then its audit event is marked break-glass', async () => {
    const answer = await callApi(t.baseUrl, 'GET', '/api/v1/clients', { token: admin, requestId: randomUUID() });

    expect(answer.status).toBe(200);
    const [event] = await auditEventsOf(t.dataSource, answer.headers.get('x-request-id')!);
    expect(event).toMatchObject({ caller_kind: 'admin', break_glass: true, staff_id: null });
  });

  it('when an operator reads /metrics, then it is served and support is refused; an admin token’s API call counts as break-glass there, its scrape of /metrics does not', async () => {
    const operator = await staffToken([GROUP_OF.operator]);
    const breakGlass = async () => {
      const answer = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${operator}` } });
      expect(answer.status).toBe(200);
      return Number(/^auth_break_glass_requests_total (\d+)$/m.exec(await answer.text())![1]);
    };
    const support = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${await staffToken([GROUP_OF.support])}` } });

    const before = await breakGlass();
    await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${admin}` } });
    const afterScrape = await breakGlass();
    await callApi(t.baseUrl, 'GET', '/api/v1/clients', { token: admin });
    const afterCall = await breakGlass();

    expect(support.status).toBe(403);
    expect([afterScrape - before, afterCall - afterScrape]).toEqual([0, 1]);
  });

  it('finding: when an admin token or a staff member uses /health/details, /metrics or /docs, admitted or refused, then each use is an audit event naming the caller, the staff roles or break-glass, the path and the status', async () => {
    const operator = await staffToken([GROUP_OF.operator]);
    const support = await staffToken([GROUP_OF.support]);
    const basicAdmin = `Basic ${Buffer.from(`admin:${admin}`).toString('base64')}`;
    const uses: [path: string, authorization: string][] = [
      ['/health/details', `Bearer ${operator}`],
      ['/metrics', `Bearer ${operator}`],
      ['/metrics', `Bearer ${admin}`],
      ['/docs-json', basicAdmin],
      ['/health/details', `Bearer ${admin}`],
      ['/metrics', `Bearer ${support}`],
      ['/docs-json', `Bearer ${partner}`],
      ['/health/details', 'Bearer pgw_not-a-token'],
    ];

    const events = [];
    for (const [path, authorization] of uses) {
      const requestId = randomUUID();
      const answer = await fetch(`${t.baseUrl}${path}`, { headers: { authorization, 'x-request-id': requestId } });
      await answer.arrayBuffer();
      events.push({ status: answer.status, events: await auditEventsOf(t.dataSource, requestId) });
    }

    const seen = events.map(({ status, events: [event, ...more] }) => ({
      status,
      more: more.length,
      event: event && {
        operation: event.operation,
        route: event.route,
        http_status: event.http_status,
        caller_kind: event.caller_kind,
        staff_roles: event.staff_roles,
        break_glass: event.break_glass,
        error_code: event.error_code,
      },
    }));
    const use = (operation: string, route: string, status: number, caller: Record<string, unknown>, errorCode: string | null = null) => ({
      status,
      more: 0,
      event: { operation, route, http_status: status, error_code: errorCode, staff_roles: null, break_glass: null, caller_kind: null, ...caller },
    });
    expect(seen).toEqual([
      use('admin.health_details', '/health/details', 200, { caller_kind: 'staff', staff_roles: 'operator' }),
      use('admin.metrics', '/metrics', 200, { caller_kind: 'staff', staff_roles: 'operator' }),
      use('admin.metrics', '/metrics', 200, { caller_kind: 'admin', break_glass: true }),
      use('admin.docs', '/docs-json', 200, { caller_kind: 'admin', break_glass: true }),
      use('admin.health_details', '/health/details', 200, { caller_kind: 'admin', break_glass: true }),
      use('admin.metrics', '/metrics', 403, { caller_kind: 'staff' }, 'AUTH.FORBIDDEN'),
      use('admin.docs', '/docs-json', 403, { caller_kind: 'partner' }, 'AUTH.FORBIDDEN'),
      use('admin.health_details', '/health/details', 401, {}, 'AUTH.INVALID_TOKEN'),
    ]);
  });

  it('when an admin path is asked for with no credential at all (a browser before its prompt, a scanner), then it is refused and no audit event names nobody', async () => {
    const requestId = randomUUID();

    const answer = await fetch(`${t.baseUrl}/health/details`, { headers: { 'x-request-id': requestId } });

    expect(answer.status).toBe(401);
    expect(await auditEventsOf(t.dataSource, requestId)).toEqual([]);
  });

  it('when an operator reads the readiness details, then they are served; support is refused there', async () => {
    const operator = await callApi(t.baseUrl, 'GET', '/health/details', { token: await staffToken([GROUP_OF.operator]) });
    const support = await callApi(t.baseUrl, 'GET', '/health/details', { token: await staffToken([GROUP_OF.support]) });

    expect(operator.status).toBe(200);
    expect([support.status, support.body.error?.code]).toEqual([403, 'AUTH.FORBIDDEN']);
  });
});

describe('staff access through the development staff provider (sandbox mode’s)', () => {
  let provider: DevIdentityProvider;
  let t: TestApp;

  beforeAll(async () => {
    provider = await startDevIdentityProvider({ port: 0, audience: STAFF_AUDIENCE, staff: true });
    t = await startTestApp({}, { development: { staffProvider: asTrustedStaffProvider(provider.issuer) } });
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  const login = (user: string) =>
    devLogin({ issuer: provider.issuer, user, audience: STAFF_AUDIENCE, scopes: [DEV_STAFF_SCOPE], clientId: DEV_CLIENTS.staff }).then(
      (tokens) => tokens.access_token,
    );

  it('when each development staff member signs in, then they reach their role’s operations, and pat (no second factor) is asked for one', async () => {
    const statuses = async (token: string) =>
      Promise.all(
        ['/api/v1/audit-events?limit=1&reason=SUP-5', '/api/v1/audit-checkpoints', '/api/v1/clients'].map(
          async (path) => (await callApi(t.baseUrl, 'GET', path, { token })).body.error?.code ?? 'OK',
        ),
      );

    const [OK, FORBIDDEN, MFA] = ['OK', 'AUTH.FORBIDDEN', 'AUTH.MFA_REQUIRED'];
    expect(await statuses(await login('sam'))).toEqual([OK, FORBIDDEN, FORBIDDEN]);
    expect(await statuses(await login('casey'))).toEqual([OK, OK, FORBIDDEN]);
    expect(await statuses(await login('oli'))).toEqual([FORBIDDEN, FORBIDDEN, OK]);
    expect(await statuses(await login('pat'))).toEqual([MFA, MFA, MFA]);
  });
});
