import { randomBytes } from 'node:crypto';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { devLogin } from '../../dev/identity-provider/dev-login';
import { openingBalanceCents, decimalOf } from '../../dev/sandbox/sandbox-accounts';
import { startTestApp, TestApp } from '../support/app';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { Answer, callApi, createCustomer } from '../support/http';
import { TEST_AUDIENCE } from '../support/oidc';

interface Account {
  id: string;
  customer_id: string;
  currency: string;
  reference: string;
  status: string;
  created_at?: string;
  iban?: string;
  sort_code?: string;
  account_number?: string;
  last4?: string;
}
interface AccountList {
  bank_accounts: Account[];
  next_cursor: string | null;
}
interface Customer {
  customer_id: string;
  reference: string | null;
  created_at: string;
  end_user_id: string | null;
  country: string | null;
  bank_account_ids: string[];
}
interface CustomerList {
  customers: Customer[];
  next_cursor: string | null;
}

/**
 * Partner resources (docs/partner-resources.md): what a partner and its end users created, read
 * back and listed through the service, which records it (the provider has no read of it). Two
 * tenants, two end users of the development OpenID provider, real HTTP to the sandbox.
 */
describe('partner resources: customers and bank accounts read and listed', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;
  let acme: string;
  let globex: string;

  const get = <T>(path: string, token = acme): Promise<Answer<T>> => callApi<T>(t.baseUrl, 'GET', path, { token });
  const open = async (customerId: string, currency: 'EUR' | 'GBP' = 'EUR', token = acme): Promise<Account> => {
    const answer = await callApi<Account>(t.baseUrl, 'POST', '/api/v1/bank-accounts', {
      token,
      body: buildBankAccountRequest({ customer_id: customerId, currency }),
    });
    expect(answer.status).toBe(201);
    return answer.body.data!;
  };
  /** Every page of a list, following next_cursor; `between` runs after each page (inserts while the list is read). */
  const allPages = async (path: string, limit: number, between: () => Promise<void> = async () => {}): Promise<Account[]> => {
    const seen: Account[] = [];
    let cursor: string | null = null;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const page: Answer<AccountList> = await get<AccountList>(`${path}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.data!.bank_accounts.length).toBeLessThanOrEqual(limit);
      seen.push(...page.body.data!.bank_accounts);
      cursor = page.body.data!.next_cursor;
      await between();
    } while (cursor);
    return seen;
  };
  const login = (user: string, scopes?: string[]) =>
    devLogin({ issuer: idp.issuer, user, audience: TEST_AUDIENCE, scopes }).then((tokens) => tokens.access_token);

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE });
    t = await startTestApp({ OIDC_ISSUER: idp.issuer, OIDC_AUDIENCE: TEST_AUDIENCE, END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64') });
    acme = await t.createClient('partner', { tenant: 'default' });
    globex = await t.createClient('partner', { tenant: 'globex' });
  });

  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('when a customer is created and given two accounts, then it reads back with its reference, country and both accounts, and nothing personal', async () => {
    const body = buildCustomerRequest({ country: 'DE' });
    const customerId = await createCustomer(t.baseUrl, acme, body);
    const eur = await open(customerId, 'EUR');
    const gbp = await open(customerId, 'GBP');

    const read = await get<Customer>(`/api/v1/customers/${customerId}`);

    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({
      customer_id: customerId,
      reference: body.reference,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
      end_user_id: null,
      country: 'DE',
      bank_account_ids: [eur.id, gbp.id],
    });
    expect(JSON.stringify(read.body)).not.toContain(body.email as string);
    expect(JSON.stringify(read.body)).not.toContain(body.last_name as string);
  });

  it('when an account is read, then its identifiers are in full; in a list, masked to their last four', async () => {
    const customerId = await createCustomer(t.baseUrl, acme);
    const eur = await open(customerId, 'EUR');
    const gbp = await open(customerId, 'GBP');

    const readEur = await get<Account>(`/api/v1/bank-accounts/${eur.id}`);
    const readGbp = await get<Account>(`/api/v1/bank-accounts/${gbp.id}`);
    const listed = await get<AccountList>(`/api/v1/bank-accounts?customer_id=${customerId}`);

    expect(readEur.status).toBe(200);
    expect(readEur.body.data).toEqual({ ...eur, created_at: expect.any(String) });
    expect(readGbp.body.data).toEqual({ ...gbp, created_at: expect.any(String) });
    expect(listed.body.data!.bank_accounts.map((account) => [account.id, account.last4])).toEqual([
      [gbp.id, gbp.account_number!.slice(-4)],
      [eur.id, eur.iban!.slice(-4)],
    ]);
    const listText = JSON.stringify(listed.body);
    expect(listText).not.toContain(eur.iban!);
    expect(listText).not.toContain(gbp.account_number!);
    expect(listed.body.data!.bank_accounts[0]).not.toHaveProperty('sort_code');
  });

  it('when the list is read a page at a time while accounts are opened, then every account there at the start is seen once, newest first', async () => {
    const customerId = await createCustomer(t.baseUrl, acme);
    const before: Account[] = [];
    for (let i = 0; i < 7; i++) before.push(await open(customerId, i % 2 === 0 ? 'EUR' : 'GBP'));
    const during: Account[] = [];

    const seen = await allPages(`/api/v1/bank-accounts?customer_id=${customerId}`, 3, async () => {
      during.push(await open(customerId, 'EUR'));
    });

    expect(seen.map((account) => account.id)).toEqual(before.map((account) => account.id).reverse());
    const fresh = await get<AccountList>(`/api/v1/bank-accounts?customer_id=${customerId}&limit=${during.length}`);
    expect(fresh.body.data!.bank_accounts.map((account) => account.id)).toEqual(during.map((account) => account.id).reverse());
  });

  it('when filtered by currency and by created range, then only those accounts, and an empty range is 400', async () => {
    const customerId = await createCustomer(t.baseUrl, acme);
    const first = await open(customerId, 'EUR');
    const second = await open(customerId, 'GBP');
    const third = await open(customerId, 'GBP');
    const times = (await get<AccountList>(`/api/v1/bank-accounts?customer_id=${customerId}`)).body.data!.bank_accounts.map((a) => a.created_at!);
    const [thirdAt, secondAt] = times;

    const gbp = await get<AccountList>(`/api/v1/bank-accounts?customer_id=${customerId}&currency=GBP`);
    const ranged = await get<AccountList>(`/api/v1/bank-accounts?customer_id=${customerId}&from=${secondAt}&to=${thirdAt}`);
    const empty = await get(`/api/v1/bank-accounts?from=${thirdAt}&to=${secondAt}`);
    // An offset ISO 8601 allows and PostgreSQL does not (past ±15:59): read as the instant it names.
    const farOffset = await get<AccountList>(`/api/v1/bank-accounts?customer_id=${customerId}&from=${encodeURIComponent('2000-01-01T00:00:00+16:00')}`);

    expect(gbp.body.data!.bank_accounts.map((a) => a.id)).toEqual([third.id, second.id]);
    expect(ranged.body.data!.bank_accounts.map((a) => a.id)).toEqual([second.id]);
    expect(ranged.body.data!.bank_accounts.map((a) => a.id)).not.toContain(first.id);
    expect([empty.status, empty.body.error?.code]).toEqual([400, 'AUDIT.INVALID_RANGE']);
    expect(farOffset.body.data!.bank_accounts).toHaveLength(3);
  });

  it('when the customers are listed a page at a time, then each of the tenant’s is seen once, newest first, and no other tenant’s', async () => {
    const globexCustomer = await createCustomer(t.baseUrl, globex);
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) mine.push(await createCustomer(t.baseUrl, acme));
    const from = (await get<Customer>(`/api/v1/customers/${mine[0]}`)).body.data!.created_at;

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Answer<CustomerList> = await get<CustomerList>(`/api/v1/customers?limit=2&from=${from}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data!.customers.map((customer) => customer.customer_id));
      cursor = page.body.data!.next_cursor;
    } while (cursor);

    expect(seen).toEqual([...mine].reverse());
    expect(seen).not.toContain(globexCustomer);
  });

  it('when another tenant asks for a customer or an account, then 404 for each, and a list naming the customer is 404, not an empty page', async () => {
    const customerId = await createCustomer(t.baseUrl, acme);
    const account = await open(customerId, 'EUR');

    const customer = await get(`/api/v1/customers/${customerId}`, globex);
    const read = await get(`/api/v1/bank-accounts/${account.id}`, globex);
    const balance = await get(`/api/v1/bank-accounts/${account.id}/balance`, globex);
    const list = await get(`/api/v1/bank-accounts?customer_id=${customerId}`, globex);
    const all = await get<AccountList>('/api/v1/bank-accounts?limit=100', globex);

    expect([customer.status, customer.body.error?.code]).toEqual([404, 'CUSTOMER.NOT_FOUND']);
    expect([read.status, read.body.error?.code]).toEqual([404, 'BANK_ACCOUNT.NOT_FOUND']);
    expect([balance.status, balance.body.error?.code]).toEqual([404, 'BANK_ACCOUNT.NOT_FOUND']);
    expect([list.status, list.body.error?.code]).toEqual([404, 'CUSTOMER.NOT_FOUND']);
    expect(all.body.data!.bank_accounts.map((a) => a.id)).not.toContain(account.id);
  });

  it('when end users list and read, then each sees only their own customers and accounts, and another’s is 404', async () => {
    const alex = await login('alex');
    const demo = await login('demo');
    const alexCustomer = await createCustomer(t.baseUrl, alex);
    const alexAccount = await open(alexCustomer, 'GBP', alex);
    const demoCustomer = await createCustomer(t.baseUrl, demo);
    const demoAccount = await open(demoCustomer, 'EUR', demo);
    const partnerCustomer = await createCustomer(t.baseUrl, acme);

    const alexCustomers = await get<CustomerList>('/api/v1/customers?limit=100', alex);
    const alexAccounts = await get<AccountList>('/api/v1/bank-accounts?limit=100', alex);
    const demoReadsAlex = await get(`/api/v1/bank-accounts/${alexAccount.id}`, demo);
    const demoReadsAlexCustomer = await get(`/api/v1/customers/${alexCustomer}`, demo);
    const alexReadsOwn = await get<Account>(`/api/v1/bank-accounts/${alexAccount.id}`, alex);
    const alexReadsCustomer = await get<Customer>(`/api/v1/customers/${alexCustomer}`, alex);

    expect(alexCustomers.body.data!.customers.map((c) => c.customer_id)).toEqual([alexCustomer]);
    expect(alexAccounts.body.data!.bank_accounts.map((a) => a.id)).toEqual([alexAccount.id]);
    expect(alexAccounts.body.data!.bank_accounts.map((a) => a.id)).not.toContain(demoAccount.id);
    expect(alexCustomers.body.data!.customers.map((c) => c.customer_id)).not.toContain(partnerCustomer);
    expect([demoReadsAlex.status, demoReadsAlex.body.error?.code]).toEqual([404, 'BANK_ACCOUNT.NOT_FOUND']);
    expect([demoReadsAlexCustomer.status, demoReadsAlexCustomer.body.error?.code]).toEqual([404, 'CUSTOMER.NOT_FOUND']);
    expect(alexReadsOwn.body.data).toMatchObject({ id: alexAccount.id, sort_code: alexAccount.sort_code, account_number: alexAccount.account_number });
    expect(alexReadsCustomer.body.data!.end_user_id).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
  });

  it('when an end user’s token lacks the read scopes, then reads and lists are 403 naming the scope, and writes still work', async () => {
    const writer = await login('alex', ['customers:write', 'bank_accounts:write']);
    const customerId = await createCustomer(t.baseUrl, writer);

    const customers = await get('/api/v1/customers', writer);
    const customer = await get(`/api/v1/customers/${customerId}`, writer);
    const accounts = await get('/api/v1/bank-accounts', writer);

    for (const answer of [customers, customer, accounts]) expect([answer.status, answer.body.error?.code]).toEqual([403, 'AUTH.INSUFFICIENT_SCOPE']);
    expect(JSON.stringify(customers.body.error)).toContain('customers:read');
    expect(JSON.stringify(accounts.body.error)).toContain('bank_accounts:read');
  });

  it('when balances are read per account and per currency, then each says its currency, the sandbox’s per-account figure, and a currency the customer has none in is 404', async () => {
    const customerId = await createCustomer(t.baseUrl, acme);
    const gbpOnly = await createCustomer(t.baseUrl, acme);
    const eur = await open(customerId, 'EUR');
    const gbp = await open(customerId, 'GBP');
    await open(gbpOnly, 'GBP');

    const eurBalance = await get<{ currency: string; available: string }>(`/api/v1/bank-accounts/${eur.id}/balance`);
    const gbpBalance = await get<{ currency: string; available: string }>(`/api/v1/bank-accounts/${gbp.id}/balance`);
    const asked = await get<{ currency: string }>(`/api/v1/customers/${customerId}/balance?currency=GBP`);
    const onlyGbp = await get<{ currency: string }>(`/api/v1/customers/${gbpOnly}/balance`);
    const noEur = await get(`/api/v1/customers/${gbpOnly}/balance?currency=EUR`);
    const badCurrency = await get(`/api/v1/customers/${gbpOnly}/balance?currency=USD`);

    expect(eurBalance.body.data).toMatchObject({ customer_id: customerId, currency: 'EUR', available: decimalOf(openingBalanceCents(eur.id)) });
    expect(gbpBalance.body.data).toMatchObject({ customer_id: customerId, currency: 'GBP', available: decimalOf(openingBalanceCents(gbp.id)) });
    expect(asked.body.data!.currency).toBe('GBP');
    expect(onlyGbp.body.data!.currency).toBe('GBP');
    expect([noEur.status, noEur.body.error?.code]).toEqual([404, 'BALANCE.NOT_FOUND']);
    expect([badCurrency.status, badCurrency.body.error?.code]).toEqual([400, 'REQUEST.VALIDATION_FAILED']);
  });

  it.each([
    ['a cursor the service did not issue', '/api/v1/bank-accounts?cursor=bm9wZQ', 'AUDIT.INVALID_CURSOR'],
    [
      'a customers cursor with an account’s id that is no UUID',
      `/api/v1/customers?cursor=${Buffer.from('["2026-12-02T09:30:00.123456Z","x"]').toString('base64url')}`,
      'AUDIT.INVALID_CURSOR',
    ],
    ['a page of 101', '/api/v1/customers?limit=101', 'REQUEST.VALIDATION_FAILED'],
    ['an account id with a slash', '/api/v1/bank-accounts/a%2Fb', 'REQUEST.BAD_PATH'],
    ['an account id with a space', '/api/v1/bank-accounts/a%20b', 'REQUEST.VALIDATION_FAILED'],
    ['an unknown filter', '/api/v1/bank-accounts?iban=DE89', 'REQUEST.VALIDATION_FAILED'],
    ['a currency the service does not open', '/api/v1/bank-accounts?currency=USD', 'REQUEST.VALIDATION_FAILED'],
  ])('when a list or a read is sent %s (%s), then 400 %s with an error id', async (_what, path, code) => {
    const answer = await get(path);

    expect([answer.status, answer.body.error?.code]).toEqual([400, code]);
    expect(answer.body.error?.id).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
  });

  it('when an account’s creation is replayed, then it is recorded once', async () => {
    const customerId = await createCustomer(t.baseUrl, acme);
    const body = buildBankAccountRequest({ customer_id: customerId });
    const first = await callApi<Account>(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: acme, body });
    const again = await callApi<Account>(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: acme, body });

    const listed = await get<AccountList>(`/api/v1/bank-accounts?customer_id=${customerId}`);

    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
    expect(listed.body.data!.bank_accounts.map((a) => a.id)).toEqual([first.body.data!.id]);
  });
});
