import { randomBytes, randomUUID } from 'node:crypto';
import {
  type BankAccountSummary,
  createDpopSigner,
  type Customer,
  eachBankAccount,
  eachCustomer,
  getBankAccount,
  createGatewayClient,
  errorCodeOf,
  GatewayClient,
  getRequest,
  hasCode,
  listRequests,
  requestIdOf,
  wasReplayed,
} from '../../clients/typescript/src/index';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { devLogin, webLogin } from '../../dev/identity-provider/dev-login';
import { webClientEnv } from '../support/sessions';
import { monthsFromToday } from '../support/builders';
import { startTestApp, TestApp } from '../support/app';

/**
 * clients/typescript as a partner app uses it: every path, body and answer below is typed from the
 * API's OpenAPI document (`npm run typecheck` compiles this file), and every call goes over HTTP to
 * the real application and on to the sandbox.
 */
describe('the typed TypeScript client, used as a partner app uses it', () => {
  let t: TestApp;
  let api: GatewayClient;

  const document = (customerId: string, currency: 'EUR' | 'GBP') => ({
    customer_id: customerId,
    currency,
    phone_number: currency === 'EUR' ? '+4915123456789' : '+447700900123',
    document_type: 'passport',
    document_number: 'C01X00T47',
    issued_country_code: currency === 'EUR' ? 'DE' : 'GB',
    issued_by: currency === 'EUR' ? 'Stadt Berlin' : 'HMPO',
    issued_date: '2020-01-15',
    expiration_date: monthsFromToday(24),
    country: currency === 'EUR' ? 'DE' : 'GB',
    zip_code: currency === 'EUR' ? '10115' : 'SW1A 1AA',
    street: currency === 'EUR' ? 'Invalidenstrasse 1' : '1 Horse Guards Road',
    date_of_birth: '1990-12-10',
  });

  beforeAll(async () => {
    t = await startTestApp();
    api = createGatewayClient({ baseUrl: t.baseUrl, token: await t.createClient('partner') });
  });
  afterAll(async () => {
    await t.close();
  });

  it('when a customer is created, its balance read and EUR and GBP accounts opened, then each answer is typed data', async () => {
    const customer = await api.POST('/api/v1/customers', {
      body: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone_number: '+447700900123' },
    });
    const customerId = customer.data!.data.customer_id;

    const balance = await api.GET('/api/v1/customers/{customer_id}/balance', { params: { path: { customer_id: customerId } } });
    const eur = await api.POST('/api/v1/bank-accounts', { body: document(customerId, 'EUR') });
    const gbp = await api.POST('/api/v1/bank-accounts', { body: document(customerId, 'GBP') });

    expect(customer.response.status).toBe(201);
    expect(balance.data?.data).toMatchObject({ customer_id: customerId, available: expect.stringMatching(/^\d+\.\d{2}$/) });
    expect(eur.data?.data).toMatchObject({ customer_id: customerId, currency: 'EUR', iban: expect.stringMatching(/^[A-Z]{2}\d{2}/) });
    expect(gbp.data?.data).toMatchObject({ customer_id: customerId, currency: 'GBP', sort_code: expect.stringMatching(/^\d{2}-\d{2}-\d{2}$/) });
  });

  it('when a tenant’s customers and accounts are read back, then eachCustomer and eachBankAccount follow every page and getBankAccount reads one in full', async () => {
    const customerId = (
      await api.POST('/api/v1/customers', { body: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone_number: '+447700900123' } })
    ).data!.data.customer_id;
    const opened = [];
    for (const currency of ['EUR', 'GBP', 'EUR'] as const)
      opened.push((await api.POST('/api/v1/bank-accounts', { body: document(customerId, currency) })).data!.data);

    const listed: BankAccountSummary[] = [];
    for await (const account of eachBankAccount(api, { customer_id: customerId, limit: 2 })) listed.push(account);
    const customers: Customer[] = [];
    for await (const customer of eachCustomer(api, { limit: 1 })) customers.push(customer);
    const read = await getBankAccount(api, opened[1].id);
    const refused = eachBankAccount(api, { customer_id: '00000000-0000-4000-8000-000000000000' })[Symbol.asyncIterator]().next();

    expect(listed.map((account) => [account.id, account.last4])).toEqual(
      opened.map((account) => [account.id, (account.iban ?? account.account_number)!.slice(-4)]).reverse(),
    );
    expect(customers.find((customer) => customer.customer_id === customerId)?.bank_account_ids).toEqual(opened.map((account) => account.id));
    expect(read.data?.data).toMatchObject({ id: opened[1].id, sort_code: opened[1].sort_code, account_number: opened[1].account_number });
    await expect(refused).rejects.toMatchObject({ name: 'GatewayListError', error: { code: 'CUSTOMER.NOT_FOUND' } });
  });

  it('when a request fails, then its error id leads, through listRequests and getRequest, to the request’s timeline in the partner’s log', async () => {
    const invalid = await api.POST('/api/v1/customers', {
      body: { first_name: 'Ada', last_name: 'Lovelace', email: 'not-an-email', phone_number: '+447700900123' },
    });
    const errorId = invalid.error!.error.id;

    const listed = await listRequests(api, { error_id: errorId, status_class: '4xx', limit: 5 });
    const requestId = listed.data!.data.requests[0].request_id;
    const timeline = await getRequest(api, requestIdOf(invalid.error!)!);

    expect(listed.data!.data.requests).toHaveLength(1);
    expect(requestId).toBe(invalid.response.headers.get('x-request-id'));
    expect(timeline.data!.data).toMatchObject({ request_id: requestId, outcome: 'rejected', error: { code: 'REQUEST.VALIDATION_FAILED', id: errorId } });
    expect(timeline.data!.data.events.map((event) => event.phase)).toEqual(['rejected']);
    expect(errorCodeOf((await getRequest(api, 'no-such-request')).error!)).toBe('REQUEST_LOG.NOT_FOUND');
  });

  it('when a request fails, then the app branches on error.code, a type that lists what that call can answer', async () => {
    const unknown = await api.GET('/api/v1/customers/{customer_id}/balance', { params: { path: { customer_id: randomUUID() } } });
    const invalid = await api.POST('/api/v1/customers', {
      body: { first_name: 'Ada', last_name: 'Lovelace', email: 'not-an-email', phone_number: '+447700900123' },
    });

    const said = (code: ReturnType<typeof errorCodeOf<NonNullable<typeof unknown.error>>>) => {
      switch (code) {
        case 'CUSTOMER.NOT_FOUND':
          return 'ask the user to pick another customer';
        case 'REQUEST.VALIDATION_FAILED':
          return 'show the fields';
        default:
          return `something else: ${code}`;
      }
    };

    expect(said(errorCodeOf(unknown.error!))).toBe('ask the user to pick another customer');
    const refused = invalid.error!;
    expect(hasCode(refused) && refused.error.code).toBe('REQUEST.VALIDATION_FAILED');
    expect(new Set(hasCode(refused) ? refused.error.fields?.map((f) => f.field) : [])).toEqual(new Set(['email']));
  });

  it('when the token is wrong, then the 401 carries AUTH.INVALID_TOKEN, as every error answer carries its code', async () => {
    const stranger = createGatewayClient({ baseUrl: t.baseUrl, token: 'pgw_wrong' });

    const answer = await stranger.GET('/api/v1/me');

    expect(answer.response.status).toBe(401);
    expect(errorCodeOf(answer.error!)).toBe('AUTH.INVALID_TOKEN');
  });

  it('when a request is sent again with its reference, then the first answer comes back, marked as replayed', async () => {
    const reference = randomUUID();
    const body = { reference, first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', phone_number: '+15555550123' };

    const first = await api.POST('/api/v1/customers', { body });
    const again = await api.POST('/api/v1/customers', { body });
    const changed = await api.POST('/api/v1/customers', { body: { ...body, last_name: 'Murray Hopper' } });

    expect([wasReplayed(first.response), wasReplayed(again.response)]).toEqual([false, true]);
    expect(again.data?.data).toEqual(first.data?.data);
    expect(errorCodeOf(changed.error!)).toBe('IDEMPOTENCY.REFERENCE_REUSED');
  });
});

/**
 * The client in an app, acting as its end user: logged in at the development OpenID provider
 * (authorization code + PKCE, over HTTP), the token bound to the app's key with the client's own
 * DPoP signer, and handed to the client as a token provider.
 */
describe('the typed TypeScript client, used by an app on behalf of its end user', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
    t = await startTestApp({ OIDC_ISSUER: idp.issuer, END_USER_PSEUDONYM_KEY: randomBytes(32).toString('hex') });
  });
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  const endUserClient = async (user: string) => {
    const signer = await createDpopSigner();
    const tokens = await devLogin({ issuer: idp.issuer, user, audience: 'urn:partner-gateway', dpop: (method, url) => signer.proof(method, url) });
    let calls = 0;
    const api = createGatewayClient({
      baseUrl: t.baseUrl,
      token: () => {
        calls += 1;
        return Promise.resolve(tokens.access_token);
      },
      dpop: signer,
    });
    return { api, calls: () => calls };
  };

  it('when demo logs in, then the client creates their customer, reads its balance and opens an account, each with a fresh DPoP proof', async () => {
    const { api, calls } = await endUserClient('demo');

    const customer = await api.POST('/api/v1/customers', {
      body: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone_number: '+447700900123' },
    });
    const customerId = customer.data!.data.customer_id;
    const me = await api.GET('/api/v1/me');
    const balance = await api.GET('/api/v1/customers/{customer_id}/balance', { params: { path: { customer_id: customerId } } });
    const account = await api.POST('/api/v1/bank-accounts', {
      body: {
        customer_id: customerId,
        currency: 'GBP',
        phone_number: '+447700900123',
        document_type: 'passport',
        document_number: 'C01X00T47',
        issued_country_code: 'GB',
        issued_by: 'HMPO',
        issued_date: '2020-01-15',
        expiration_date: monthsFromToday(24),
        country: 'GB',
        zip_code: 'SW1A 1AA',
        street: '1 Horse Guards Road',
        date_of_birth: '1990-12-10',
      },
    });

    expect(customer.response.status).toBe(201);
    expect(me.data?.data).toMatchObject({ role: 'end_user', customer_ids: [customerId] });
    expect(balance.data?.data.customer_id).toBe(customerId);
    expect(account.response.status).toBe(201);
    expect(calls()).toBe(4);
  });

  it('when alex asks for demo’s customer, then the client gets 404 CUSTOMER.NOT_FOUND', async () => {
    const demo = await endUserClient('demo');
    const created = await demo.api.POST('/api/v1/customers', {
      body: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone_number: '+447700900123' },
    });
    const alex = await endUserClient('alex');

    const balance = await alex.api.GET('/api/v1/customers/{customer_id}/balance', { params: { path: { customer_id: created.data!.data.customer_id } } });

    expect(balance.response.status).toBe(404);
    expect(errorCodeOf(balance.error!)).toBe('CUSTOMER.NOT_FOUND');
  });
});

/** The client in a web app: no token, the gateway's browser session (its cookie, sent by the browser; here, by a fetch that adds it). */
describe('the typed TypeScript client, used by a web app through the gateway’s browser session', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
    t = await startTestApp(webClientEnv(idp.issuer));
    await idp.setWebOrigins([t.baseUrl]);
  });
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  it('when demo is logged in, then the client reads the session and logs out with the cookie and X-CSRF, and no Authorization', async () => {
    const { session } = await webLogin(t.baseUrl, 'demo');
    const sent: Headers[] = [];
    // What the browser does with credentials: 'include': the cookie goes along.
    const browserFetch: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      request.headers.set('cookie', `__Host-gw_session=${session}`);
      sent.push(request.headers);
      return fetch(request);
    };
    const api = createGatewayClient({ baseUrl: t.baseUrl, session: true, fetch: browserFetch });

    const me = await api.GET('/api/v1/session');
    const out = await api.POST('/api/v1/session/logout', { body: { return_to: '/' } });
    const after = await api.GET('/api/v1/session');

    expect(me.data?.data).toMatchObject({ tenant: 'default', customer_ids: [] });
    expect(out.data?.data.logout_url).toContain('/session/end');
    expect(after.response.status).toBe(401);
    expect(sent.every((headers) => headers.get('x-csrf') === '1' && !headers.has('authorization'))).toBe(true);
    expect(() => createGatewayClient({ baseUrl: t.baseUrl })).toThrow(/token .* or session/);
  });
});
