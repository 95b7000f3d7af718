import { randomUUID } from 'node:crypto';
import { earliestAcceptedExpiry } from '../../src/partner-api/bank-accounts/domain/document-expiry.rule';
import { startTestApp, TestApp } from '../support/app';
import { auditEventsOf } from '../support/audit';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { clearSandbox, journal } from '../support/sandbox';

function shiftDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}
const today = () => new Date().toISOString().slice(0, 10);

describe('partner API: bad input', () => {
  let t: TestApp;
  let partner: string;
  let customerId: string;

  const post = (path: string, body: unknown, requestId?: string) => callApi(t.baseUrl, 'POST', path, { token: partner, body, requestId });

  beforeAll(async () => {
    t = await startTestApp();
    partner = await t.createClient('partner');
    customerId = await createCustomer(t.baseUrl, partner);
  });
  beforeEach(async () => {
    await clearSandbox(t.sandbox);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('POST /api/v1/bank-accounts', () => {
    const tooLong = 'x'.repeat(201);
    it.each([
      ['currency is USD', { currency: 'USD' }, 'currency'],
      ['currency is lower case', { currency: 'eur' }, 'currency'],
      ['customer_id is not a UUID', { customer_id: 'cust-1' }, 'customer_id'],
      ['reference is not a UUID', { reference: '12345' }, 'reference'],
      ['phone_number has letters', { phone_number: '+49 151 CALLME' }, 'phone_number'],
      ['phone_number is too long for E.164', { phone_number: '+1234567890123456' }, 'phone_number'],
      ['phone_number is too short', { phone_number: '12345' }, 'phone_number'],
      ['issued_country_code is not ISO 3166', { issued_country_code: 'XX' }, 'issued_country_code'],
      ['country is three letters', { country: 'DEU' }, 'country'],
      ['issued_date is an impossible date', { issued_date: '2021-02-29' }, 'issued_date'],
      ['issued_date is in the future', { issued_date: shiftDays(today(), 3) }, 'issued_date'],
      ['issued_date is after expiration_date', { issued_date: '2020-01-15', expiration_date: '2019-01-01' }, 'issued_date'],
      ['date_of_birth is in the future', { date_of_birth: shiftDays(today(), 1) }, 'date_of_birth'],
      ['date_of_birth is not YYYY-MM-DD', { date_of_birth: '10/12/1990' }, 'date_of_birth'],
      ['expiration_date is an impossible date', { expiration_date: '2031-04-31' }, 'expiration_date'],
      ['expiration_date has a time', { expiration_date: '2031-04-30T00:00:00Z' }, 'expiration_date'],
      ['expiration_date is missing', { expiration_date: undefined }, 'expiration_date'],
      ['document_number is missing', { document_number: undefined }, 'document_number'],
      ['document_type is empty', { document_type: '' }, 'document_type'],
      ['street is too long', { street: tooLong }, 'street'],
      ['zip_code is a number', { zip_code: 10115 }, 'zip_code'],
      ['issued_by is null', { issued_by: null }, 'issued_by'],
      ['an unknown field is sent', { iban: 'DE89370400440532013000' }, 'iban'],
    ])('when %s, then 400 naming the field and nothing is sent upstream', async (_, overrides, field) => {
      const requestId = randomUUID();

      const answer = await post('/api/v1/bank-accounts', buildBankAccountRequest({ customer_id: customerId, ...overrides }), requestId);

      expect(answer.status).toBe(400);
      expect(answer.body.error!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.body.error!.fields!.filter((f) => f.field === field)).toHaveLength(1);
      expect(await journal(t.sandbox)).toEqual([]);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ operation: 'bank_account.create', phase: 'rejected', http_status: 400, error_id: answer.body.error!.id });
    });

    it('when a request with a reference fails validation, then its event is found by that reference, with no free text', async () => {
      const body = buildBankAccountRequest({ customer_id: customerId, currency: 'USD', street: 'Geheimweg 13' });
      const requestId = randomUUID();

      await post('/api/v1/bank-accounts', body, requestId);

      const [event] = await auditEventsOf(t.dataSource, requestId);
      expect(event).toMatchObject({ reference: body.reference, customer_id: customerId, currency: null });
      expect(JSON.stringify(event)).not.toContain('Geheimweg');
    });

    it('when several fields are bad, then each is named', async () => {
      const answer = await post('/api/v1/bank-accounts', buildBankAccountRequest({ customer_id: 'x', currency: 'USD', country: 'ZZ' }));

      expect(answer.status).toBe(400);
      expect(answer.body.error!.fields!.map((f) => f.field)).toEqual(expect.arrayContaining(['customer_id', 'currency', 'country']));
    });

    it('when the expiry is the day before the earliest accepted date, then 400 naming that date', async () => {
      const earliest = earliestAcceptedExpiry(new Date());

      const answer = await post('/api/v1/bank-accounts', buildBankAccountRequest({ customer_id: customerId, expiration_date: shiftDays(earliest, -1) }));

      expect(answer.status).toBe(400);
      const problem = answer.body.error!.fields!.find((f) => f.field === 'expiration_date');
      expect(problem?.message).toContain(earliest);
    });

    it('when the expiry is exactly the earliest accepted date, then the account is opened', async () => {
      const answer = await post(
        '/api/v1/bank-accounts',
        buildBankAccountRequest({ customer_id: customerId, expiration_date: earliestAcceptedExpiry(new Date()) }),
      );

      expect(answer.status).toBe(201);
    });

    it('when state is left out, then it is not required', async () => {
      const answer = await post('/api/v1/bank-accounts', buildBankAccountRequest({ customer_id: customerId, state: undefined }));

      expect(answer.status).toBe(201);
    });
  });

  describe('POST /api/v1/customers', () => {
    it.each([
      ['email is not an address', { email: 'ada-at-example' }, 'email'],
      ['first_name is missing', { first_name: undefined }, 'first_name'],
      ['last_name is too long', { last_name: 'L'.repeat(101) }, 'last_name'],
      ['country is not a country', { country: 'QQ' }, 'country'],
      ['date_of_birth is 1990-02-30', { date_of_birth: '1990-02-30' }, 'date_of_birth'],
      ['first_name is an object', { first_name: { $ne: '' } }, 'first_name'],
      ['an unknown field is sent', { password: 'hunter2' }, 'password'],
    ])('when %s, then 400 naming the field', async (_, overrides, field) => {
      const answer = await post('/api/v1/customers', buildCustomerRequest(overrides));

      expect(answer.status).toBe(400);
      expect(answer.body.error!.fields!.map((f) => f.field)).toContain(field);
      expect(await journal(t.sandbox)).toEqual([]);
    });
  });

  describe('one message per field', () => {
    it('when the body is empty, then each required field is named once, as required, in the order the body declares them', async () => {
      const answer = await post('/api/v1/customers', {});

      expect(answer.status).toBe(400);
      expect(answer.body.error!.fields).toEqual([
        { field: 'first_name', message: 'first_name is required' },
        { field: 'last_name', message: 'last_name is required' },
        { field: 'email', message: 'email is required' },
        { field: 'phone_number', message: 'phone_number is required' },
      ]);
    });

    it.each([
      ['missing', undefined, 'email is required'],
      ['a number', 5, 'email must be a string'],
      ['not an address', 'ada-at-example', 'email must be an email address'],
      ['too long', `${'a'.repeat(250)}@example.com`, 'email must be at most 254 characters'],
      ['a lone high surrogate', '\ud800', 'email must not contain control characters'],
      ['a lone surrogate inside an address', 'a\ud800@example.com', 'email must not contain control characters'],
      ['two surrogates in the wrong order', '\udc00\ud800', 'email must not contain control characters'],
    ])('when email is %s, then 400 with one message: the first rule it fails', async (_what, email, message) => {
      const answer = await post('/api/v1/customers', buildCustomerRequest({ email }));

      expect(answer.status).toBe(400);
      expect(answer.body.error!.fields).toEqual([{ field: 'email', message }]);
      expect(await journal(t.sandbox)).toEqual([]);
    });

    it('when an issue date is both in the future and after the expiry, then the one message is the first rule (not in the future)', async () => {
      const answer = await post(
        '/api/v1/bank-accounts',
        buildBankAccountRequest({ customer_id: customerId, issued_date: '2099-01-01', expiration_date: '2098-01-01' }),
      );

      expect(answer.body.error!.fields!.filter((f) => f.field === 'issued_date')).toEqual([
        { field: 'issued_date', message: 'issued_date must not be in the future' },
      ]);
    });
  });

  describe('null (docs/field-rules.md: refused, never forwarded)', () => {
    it.each([
      ['date_of_birth', 'date_of_birth must not be null: leave it out instead'],
      ['country', 'country must not be null: leave it out instead'],
      ['reference', 'reference must not be null: leave it out instead'],
      ['first_name', 'first_name is required'],
    ])('when a customer’s %s is null, then 400 naming it, nothing is sent, and the reference is still free', async (field, message) => {
      const body = buildCustomerRequest();
      const requestId = randomUUID();

      const refused = await post('/api/v1/customers', { ...body, [field]: null }, requestId);

      expect(refused.status).toBe(400);
      expect(refused.body.error!.code).toBe('REQUEST.VALIDATION_FAILED');
      expect(refused.body.error!.fields).toEqual([{ field, message }]);
      expect(await journal(t.sandbox)).toEqual([]);
      expect((await auditEventsOf(t.dataSource, requestId)).map((e) => e.phase)).toEqual(['rejected']);
      expect((await post('/api/v1/customers', body)).status).toBe(201);
    });

    it('when a bank account’s optional state is null, then 400 naming it and nothing is sent', async () => {
      const answer = await post('/api/v1/bank-accounts', buildBankAccountRequest({ customer_id: customerId, state: null }));

      expect(answer.status).toBe(400);
      expect(answer.body.error!.fields).toEqual([{ field: 'state', message: 'state must not be null: leave it out instead' }]);
      expect(await journal(t.sandbox)).toEqual([]);
    });
  });

  describe('the request itself', () => {
    it.each([
      ['Latin-1 (an é as the byte 0xE9)', [0xe9]],
      ['a UTF-16 byte-order mark', [0xff, 0xfe]],
      ['a lone continuation byte', [0x80]],
      ['an overlong encoding', [0xc0, 0xaf]],
    ])('when a name is sent in %s, then 400 REQUEST.MALFORMED_JSON that says UTF-8, and nothing is sent', async (_what, bytes) => {
      const requestId = randomUUID();
      const [before, after] = JSON.stringify(buildCustomerRequest({ first_name: 'Jos<here>' })).split('<here>');
      const body = Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);

      const response = await fetch(`${t.baseUrl}/api/v1/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${partner}`, 'content-type': 'application/json', 'x-request-id': requestId },
        body,
      });
      const answer = (await response.json()) as { error: { id: string; code: string; details: string } };

      expect(response.status).toBe(400);
      expect(answer.error.code).toBe('REQUEST.MALFORMED_JSON');
      expect(answer.error.details).toContain('UTF-8');
      expect(await journal(t.sandbox)).toEqual([]);
      expect(await auditEventsOf(t.dataSource, requestId)).toMatchObject([{ phase: 'rejected', http_status: 400, error_id: answer.error.id }]);
    });

    it('when a balance path id is not a UUID, then 400 naming customer_id', async () => {
      const answer = await callApi(t.baseUrl, 'GET', '/api/v1/customers/not-a-uuid/balance', { token: partner });

      expect(answer.status).toBe(400);
      expect(answer.body.error!.fields!.map((f) => f.field)).toContain('customer_id');
    });

    it.each([
      ['malformed JSON', '{"customer_id": "', 'application/json', 400],
      ['an empty JSON body', '', 'application/json', 400],
      ['a JSON array', '[1,2,3]', 'application/json', 400],
      ['JSON null', 'null', 'application/json', 400],
      ['text/plain', 'customer_id=1', 'text/plain', 415],
      ['form encoding', 'customer_id=1', 'application/x-www-form-urlencoded', 415],
      ['XML', '<account/>', 'application/xml', 415],
    ])('when the body is %s, then %i in the envelope, never a 500', async (_, rawBody, contentType, status) => {
      const requestId = randomUUID();
      const answer = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', {
        token: partner,
        rawBody,
        headers: { 'content-type': contentType },
        requestId,
      });

      expect(answer.status).toBe(status);
      expect(answer.body.error!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(await journal(t.sandbox)).toEqual([]);
      expect(await auditEventsOf(t.dataSource, requestId)).toHaveLength(1);
    });

    it.each([
      ['a string', '"just a string"'],
      ['an array', '[{"first_name":"Ada"}]'],
      ['null', 'null'],
      ['a number', '42'],
    ])('when the JSON body is %s, then 400 saying the body must be a JSON object, and no field is named', async (_what, rawBody) => {
      const answer = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, rawBody, headers: { 'content-type': 'application/json' } });

      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'REQUEST.VALIDATION_FAILED', details: expect.stringMatching(/must be a JSON object/) });
      expect(answer.body.error!.fields ?? []).toEqual([]);
      expect(await journal(t.sandbox)).toEqual([]);
    });

    it('when the body is larger than BODY_LIMIT_BYTES, then 413 in the envelope', async () => {
      const requestId = randomUUID();
      const huge = JSON.stringify(buildBankAccountRequest({ customer_id: customerId, street: 'x'.repeat(70_000) }));

      const answer = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', {
        token: partner,
        rawBody: huge,
        headers: { 'content-type': 'application/json' },
        requestId,
      });

      expect(answer.status).toBe(413);
      expect(answer.body.error!.message).toMatch(/larger than the service accepts/);
      const events = await auditEventsOf(t.dataSource, requestId);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ http_status: 413, phase: 'rejected' });
    });
  });
});
