import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestApp, TestApp } from '../support/app';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { OpenApiContract } from '../support/openapi-contract';
import { webClientEnv } from '../support/sessions';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { devLogin, webLogin } from '../../dev/identity-provider/dev-login';

/**
 * The contract as a partner's tools read it: one scenario calls every operation of openapi.json,
 * with valid input and with invalid input, as a partner's server, an end user, a web app, staff and
 * the OpenID provider would, and every answer is checked against the document by ajv (JSON Schema
 * 2020-12): its status declared, its content type declared, its body valid. A client generated from
 * the document, or a validating proxy in front of the gateway, would accept every one of them.
 */
describe('the OpenAPI document admits every answer the service gives', () => {
  const contract = OpenApiContract.fromFile();
  let idp: DevIdentityProvider;
  let t: TestApp;
  let partner: string;
  let admin: string;

  const json = (token: string | undefined, body?: unknown, extra: Record<string, string> = {}): RequestInit => ({
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...extra,
    },
    ...(body === undefined ? {} : { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const call = (path: string, init: RequestInit = {}) => contract.fetch(`${t.baseUrl}${path}`, init);

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
    t = await startTestApp(webClientEnv(idp.issuer, { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_IP_PER_MINUTE: '100000' }));
    await idp.setWebOrigins([t.baseUrl]);
    partner = await t.createClient('partner');
    admin = await t.createClient('admin');
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
    process.stdout.write(`\nOpenAPI contract: ${contract.summary()}\n`);
  });

  it('when every operation is called with valid and invalid input, then every answer matches the document', async () => {
    // The partner API: a customer, its balance, EUR and GBP accounts, an end user given the customer.
    const created = await call('/api/v1/customers', json(partner, buildCustomerRequest()));
    const customerId = created.json().data.customer_id as string;
    const receipt = decodeJwt(created.headers.get('audit-receipt')!) as { event_id: string };
    await call('/api/v1/customers', json(partner, { ...buildCustomerRequest(), email: 'not-an-email', nickname: 'x' }));
    await call('/api/v1/customers', json(partner, '{"first_name":'));
    await call('/api/v1/customers', json(undefined, buildCustomerRequest()));
    await call(`/api/v1/customers/${customerId}/balance`, json(partner));
    await call(`/api/v1/customers/${randomUUID()}/balance`, json(partner));
    await call('/api/v1/customers/not-a-uuid/balance', json(partner));
    await call('/api/v1/bank-accounts', json(partner, buildBankAccountRequest({ customer_id: customerId, currency: 'EUR' })));
    await call(
      '/api/v1/bank-accounts',
      json(partner, buildBankAccountRequest({ customer_id: customerId, currency: 'GBP', country: 'GB', issued_country_code: 'GB' })),
    );
    await call('/api/v1/bank-accounts', json(partner, buildBankAccountRequest({ customer_id: customerId, expiration_date: '2020-01-01' })));
    // What was created, read back and listed; a currency the customer has no balance in; bad ids, cursors and ranges.
    const accountId = (await call(`/api/v1/bank-accounts?customer_id=${customerId}&limit=1`, json(partner))).json().data.bank_accounts[0].id as string;
    await call(`/api/v1/bank-accounts?customer_id=${customerId}&currency=GBP&from=2026-01-01&to=2099-01-01`, json(partner));
    await call('/api/v1/bank-accounts?cursor=bm9wZQ', json(partner));
    await call('/api/v1/bank-accounts?from=2027-01-01&to=2026-01-01', json(partner));
    await call(`/api/v1/bank-accounts?customer_id=${randomUUID()}`, json(partner));
    await call(`/api/v1/bank-accounts/${accountId}`, json(partner));
    await call('/api/v1/bank-accounts/no%20such', json(partner));
    await call(`/api/v1/bank-accounts/${randomUUID()}`, json(partner));
    await call(`/api/v1/bank-accounts/${accountId}/balance`, json(partner));
    await call(`/api/v1/bank-accounts/${randomUUID()}/balance`, json(partner));
    await call(`/api/v1/customers/${customerId}/balance?currency=GBP`, json(partner));
    await call('/api/v1/customers?limit=1', json(partner));
    await call('/api/v1/customers?limit=0', json(partner));
    await call(`/api/v1/customers/${customerId}`, json(partner));
    await call(`/api/v1/customers/${randomUUID()}`, json(partner));
    const reference = randomUUID();
    await call('/api/v1/customers', json(partner, buildCustomerRequest({ reference })));
    await call('/api/v1/customers', json(partner, buildCustomerRequest({ reference })));
    await call('/api/v1/customers', json(partner, buildCustomerRequest({ reference, last_name: 'Other' })));
    await call(`/api/v1/customers/${customerId}/end-user`, json(partner, { subject: 'demo' }));
    await call(`/api/v1/customers/${customerId}/end-user`, json(partner, { subject: '' }));
    await call('/api/v1/me', json(partner));
    await call('/api/v1/me', json('pgw_wrong'));

    // Events and webhooks.
    const made = await call('/api/v1/webhook-endpoints', json(partner, { url: 'https://partner.example/hook', event_types: ['customer.created'] }));
    const endpointId = made.json().data.id as string;
    await call('/api/v1/webhook-endpoints', json(partner, { url: 'ftp://partner.example/hook' }));
    await call('/api/v1/webhook-endpoints', json(partner, { url: 'https://partner.example/hook', event_types: 'customer.created' }));
    await call('/api/v1/webhook-endpoints?limit=1', json(partner));
    await call('/api/v1/webhook-endpoints?limit=0', json(partner));
    await call(`/api/v1/webhook-endpoints/${endpointId}`, json(partner));
    await call(`/api/v1/webhook-endpoints/${randomUUID()}`, json(partner));
    await call(`/api/v1/webhook-endpoints/${endpointId}`, { ...json(partner, { description: 'Ledger', ordered: true }), method: 'PATCH' });
    await call(`/api/v1/webhook-endpoints/${endpointId}`, { ...json(partner, { enabled: 'yes' }), method: 'PATCH' });
    await call(`/api/v1/webhook-endpoints/${endpointId}/rotate-secret`, json(partner, { overlap_hours: 1 }));
    await call(`/api/v1/webhook-endpoints/${endpointId}/rotate-secret`, json(partner, { overlap_hours: 1000 }));
    const listed = await call('/api/v1/events?limit=5&type=customer.created', json(partner));
    const eventId = listed.json().data.events[0].id as string;
    await call('/api/v1/events?type=customer.deleted', json(partner));
    await call(`/api/v1/events/${eventId}`, json(partner));
    await call(`/api/v1/events/${randomUUID()}`, json(partner));
    await call(`/api/v1/events/${eventId}/deliveries`, json(partner));
    await call('/api/v1/events/not-an-event/deliveries', json(partner));
    await call(`/api/v1/webhook-endpoints/${endpointId}/deliveries`, json(partner));
    await call(`/api/v1/webhook-endpoints/${randomUUID()}/deliveries`, json(partner));
    await call(`/api/v1/webhook-endpoints/${endpointId}/redeliveries`, json(partner, { event_id: eventId }));
    await call(`/api/v1/webhook-endpoints/${endpointId}/redeliveries`, json(partner, { from: '2027-01-01', to: '2026-01-01' }));
    await call('/api/v1/webhooks/jwks');
    await call(`/api/v1/webhook-endpoints/${endpointId}`, { ...json(partner), method: 'DELETE' });
    await call(`/api/v1/webhook-endpoints/${endpointId}`, { ...json(partner), method: 'DELETE' });

    // The partner's own request log and receipts.
    const page = await call('/api/v1/requests?limit=5', json(partner));
    await call('/api/v1/requests?status_class=4xx&limit=100', json(partner));
    await call('/api/v1/requests?limit=0', json(partner));
    for (const entry of page.json().data.requests as { request_id: string }[]) await call(`/api/v1/requests/${entry.request_id}`, json(partner));
    await call('/api/v1/requests/no-such-request', json(partner));
    await call(`/api/v1/receipts/${receipt.event_id}`, json(partner));
    await call('/api/v1/receipts/not-an-event', json(partner));
    await call('/api/v1/checkpoints/consistency?from=1', json(partner));
    await call('/api/v1/checkpoints/consistency?from=x', json(partner));
    await call('/.well-known/audit-keys.json');

    // Staff's operations, with an admin token (break-glass), and refused to a partner.
    const events = await call('/api/v1/audit-events?limit=3', json(admin));
    await call(`/api/v1/audit-events/${events.json().data.events[0].id as string}`, json(admin));
    await call(`/api/v1/audit-events/${randomUUID()}`, json(admin));
    await call('/api/v1/audit-events?limit=many', json(admin));
    await call('/api/v1/audit-events', json(partner));
    const today = new Date().toISOString().slice(0, 10);
    await call(`/api/v1/audit-access-report?from=${today}&to=${today}`, json(admin));
    await call('/api/v1/audit-access-report?from=yesterday', json(admin));
    await call('/api/v1/audit-checkpoints', json(admin));
    await call('/api/v1/audit-checkpoints?limit=-1', json(admin));
    await call('/api/v1/unresolved-calls', json(admin));
    await call('/api/v1/unresolved-calls?older_than=forever', json(admin));
    await call('/api/v1/clients', json(admin));
    await call('/api/v1/clients', json(partner));
    await call('/api/v1/end-user-sessions?end_user=demo', json(admin));
    await call('/api/v1/end-user-sessions', json(admin));
    await call('/api/v1/end-user-sessions/end', json(admin, { end_user: 'nobody' }));
    await call('/api/v1/end-user-sessions/end', json(admin, { end_user: 'demo', extra: true }));
    await call('/health/details', json(admin));
    await call('/health/details', json(partner));
    await call('/health/live');
    await call('/health/ready');

    // An end user, with their access token; a web app, through its browser session.
    const tokens = await devLogin({ issuer: idp.issuer, user: 'demo', audience: 'urn:partner-gateway' });
    await call('/api/v1/me', json(tokens.access_token));
    await call('/api/v1/session', json(tokens.access_token));
    await call(`/api/v1/customers/${customerId}/balance`, json(tokens.access_token));
    await call('/api/v1/clients', json(tokens.access_token));
    const { session } = await webLogin(t.baseUrl, 'demo');
    const browser = { cookie: `__Host-gw_session=${session}`, 'x-csrf': '1' };
    await call('/api/v1/session', { headers: browser });
    await call('/api/v1/session', { headers: { cookie: `__Host-gw_session=${session}` } });
    await call('/api/v1/session/login?return_to=%2Fapp%2F');
    await call('/api/v1/session/login?return_to=https%3A%2F%2Felsewhere.example%2F');
    await call('/api/v1/session/callback?code=x&state=y');
    await call('/api/v1/session/logout', {
      method: 'POST',
      headers: { ...browser, 'content-type': 'application/json' },
      body: JSON.stringify({ return_to: '/app/' }),
    });
    await call('/api/v1/session/logout', { method: 'POST', headers: { 'x-csrf': '1', 'content-type': 'application/json' }, body: '{}' });
    await call('/api/v1/session/backchannel-logout', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'logout_token=not-a-jwt',
    });

    expect(contract.violations).toEqual([]);
    expect([...contract.covered].sort()).toEqual(contract.operations.sort());
  });

  it('when a request breaks a rule JSON Schema can say, then a client validating against the document refuses it as the service does', async () => {
    const customerId = (await call('/api/v1/customers', json(partner, buildCustomerRequest()))).json().data.customer_id as string;
    const customer = (changes: Record<string, unknown>) => ({ ...buildCustomerRequest(), ...changes });
    const account = (changes: Record<string, unknown>) => ({ ...buildBankAccountRequest({ customer_id: customerId }), ...changes });
    const cases: { what: string; method: 'GET' | 'POST'; path: string; token: string; body?: unknown; headers?: Record<string, string> }[] = [
      { what: 'a version named', method: 'GET', path: '/api/v1/me', token: partner, headers: { 'Gateway-Version': '2026-12-01' } },
      { what: 'an unknown version', method: 'GET', path: '/api/v1/me', token: partner, headers: { 'Gateway-Version': '2031-01-01' } },
      { what: 'a customer', method: 'POST', path: '/api/v1/customers', token: partner, body: customer({}) },
      { what: 'an unknown field', method: 'POST', path: '/api/v1/customers', token: partner, body: customer({ nickname: 'Ada' }) },
      { what: 'an email without a dot in its domain', method: 'POST', path: '/api/v1/customers', token: partner, body: customer({ email: 'ada@example' }) },
      { what: 'a phone number of letters', method: 'POST', path: '/api/v1/customers', token: partner, body: customer({ phone_number: 'call me' }) },
      { what: 'a lower-case country', method: 'POST', path: '/api/v1/customers', token: partner, body: customer({ country: 'gb' }) },
      { what: 'a name too long', method: 'POST', path: '/api/v1/customers', token: partner, body: customer({ first_name: 'A'.repeat(101) }) },
      { what: 'a reference that is no UUID', method: 'POST', path: '/api/v1/customers', token: partner, body: customer({ reference: 'order-1' }) },
      { what: 'a missing required field', method: 'POST', path: '/api/v1/customers', token: partner, body: customer({ email: undefined }) },
      { what: 'a number for a string', method: 'POST', path: '/api/v1/customers', token: partner, body: customer({ last_name: 42 }) },
      { what: 'an account', method: 'POST', path: '/api/v1/bank-accounts', token: partner, body: account({}) },
      { what: 'a currency not offered', method: 'POST', path: '/api/v1/bank-accounts', token: partner, body: account({ currency: 'USD' }) },
      { what: 'a date that is no date', method: 'POST', path: '/api/v1/bank-accounts', token: partner, body: account({ issued_date: '15.01.2020' }) },
      { what: 'a document number too long', method: 'POST', path: '/api/v1/bank-accounts', token: partner, body: account({ document_number: '9'.repeat(51) }) },
      { what: 'a request log page', method: 'GET', path: '/api/v1/requests?limit=100&status=201&from=2026-11-01', token: partner },
      { what: 'a limit of 0', method: 'GET', path: '/api/v1/requests?limit=0', token: partner },
      { what: 'a fractional limit', method: 'GET', path: '/api/v1/requests?limit=1.5', token: partner },
      { what: 'a status that is no HTTP status', method: 'GET', path: '/api/v1/requests?status=99', token: partner },
      { what: 'a status class not listed', method: 'GET', path: '/api/v1/requests?status_class=6xx', token: partner },
      { what: 'an instant in another form', method: 'GET', path: '/api/v1/requests?from=01.11.2026', token: partner },
      { what: 'an unknown query parameter', method: 'GET', path: '/api/v1/requests?colour=blue', token: partner },
      { what: 'a duration', method: 'GET', path: '/api/v1/unresolved-calls?older_than=5m', token: admin },
      { what: 'a duration in words', method: 'GET', path: '/api/v1/unresolved-calls?older_than=five%20minutes', token: admin },
      { what: 'a reason too short', method: 'GET', path: '/api/v1/audit-events?reason=no', token: admin },
      { what: 'a checkpoint number of 0', method: 'GET', path: '/api/v1/checkpoints/consistency?from=0', token: partner },
      { what: 'a missing required parameter', method: 'GET', path: '/api/v1/checkpoints/consistency', token: partner },
      // The provider's callback takes what the provider adds; its refusal of a bad state is the login's, not the validation's.
      { what: 'a parameter the provider adds', method: 'GET', path: '/api/v1/session/callback?state=x&session_state=y', token: partner },
    ];

    const verdicts = [];
    for (const { what, method, path, token, body, headers = {} } of cases) {
      const answer = await call(path, method === 'POST' ? json(token, body, headers) : json(token, undefined, headers));
      // Refused as invalid input (another 400, the callback's SESSION.LOGIN_FAILED, is not about the request's form).
      const refusedByService = answer.status === 400 && answer.json().error?.code === 'REQUEST.VALIDATION_FAILED';
      const problems = contract.requestProblems(method, path, body === undefined ? undefined : JSON.parse(JSON.stringify(body)), headers);
      verdicts.push({ what, service: refusedByService ? 'refused' : `${answer.status}`, document: problems.length > 0 ? 'refused' : 'admitted' });
    }

    // Their answers are the document's too.
    expect(contract.violations).toEqual([]);
    // Every one the service refuses the document refuses, and the document admits what the service accepts.
    expect(verdicts.filter(({ service, document }) => (service === 'refused') !== (document === 'refused'))).toEqual([]);
    expect(verdicts.filter(({ service }) => service === 'refused').length).toBe(cases.length - 6);
  });
});
