import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { AuditRow, auditEventsOf } from '../support/audit';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { rawExchange } from '../support/raw-http';
import { journal } from '../support/sandbox';
import { waitFor } from '../support/wait-for';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The one event a request left once it has ended (its terminal one). */
async function terminalEventOf(sut: TestApp, requestId: string): Promise<AuditRow | undefined> {
  const events = await waitFor(
    async () => {
      const terminal = (await auditEventsOf(sut.dataSource, requestId)).filter((event) => event.phase !== 'attempted');
      return terminal.length > 0 ? terminal : undefined;
    },
    { timeoutMs: 5000 },
  );
  expect(events).toHaveLength(1);
  return events?.[0];
}

describe('The edge: refusals by Node and the router are envelopes', () => {
  let sut: TestApp;
  let partner: string;

  beforeAll(async () => {
    sut = await startTestApp({ REQUEST_TIMEOUT_MS: '800', HEADERS_TIMEOUT_MS: '500' });
    partner = await sut.createClient('partner');
  });

  afterAll(async () => {
    await sut.close();
  });

  it('when a path parameter is 2,000 characters long, then 414 in the envelope, the path not echoed, and the request audited on its route', async () => {
    const requestId = randomUUID();
    const long = 'a'.repeat(2000);

    const answer = await callApi(sut.baseUrl, 'GET', `/api/v1/customers/${long}/balance`, { token: partner, requestId });

    expect(answer.status).toBe(414);
    expect(answer.body.error?.id).toMatch(UUID);
    expect(answer.body.error?.code).toBe('REQUEST.URI_TOO_LONG');
    expect(JSON.stringify(answer.body)).not.toContain('aaaaaaaaaa');
    expect(await terminalEventOf(sut, requestId)).toMatchObject({
      operation: 'balance.read',
      route: '/api/v1/customers/:customer_id/balance',
      http_status: 414,
      error_code: 'REQUEST.URI_TOO_LONG',
    });
  });

  it.each([
    [
      'two Content-Length headers',
      `POST /api/v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      400,
      'REQUEST.MALFORMED',
    ],
    ['a NUL in a header', `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\nX-Note: a\u0000b\r\n\r\n`, 400, 'REQUEST.MALFORMED'],
    ['a request line that is not HTTP', `GET /api/v1/me HTTP/9.9 extra\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\n\r\n`, 400, 'REQUEST.MALFORMED'],
    [
      'headers over 16 KiB',
      `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'REQUEST.HEADERS_TOO_LARGE',
    ],
  ])(
    'when a request has %s, then Node’s refusal is the envelope with an error id and its code, logged once without what was sent',
    async (_what, text, status, code) => {
      const logs = sut.logs;

      const answer = await rawExchange(sut.baseUrl, text.replace('TOKEN', partner));

      expect(answer.status).toBe(status);
      expect(answer.body).toMatchObject({ status, data: null, error: { id: expect.stringMatching(UUID), code } });
      expect(answer.headers['x-request-id']).toMatch(UUID);
      expect(answer.closedByServer).toBe(true);
      const lines = await waitFor(() => {
        const found = logs.lines.filter((line) => line.errorId === answer.body?.error?.id);
        return found.length > 0 ? found : undefined;
      });
      expect(lines).toHaveLength(1);
      expect(logs.text).not.toContain(partner);
    },
  );

  it.each([
    [
      'Expect: 200-ok (Node’s own bare 417 before)',
      `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\nX-Request-Id: RID\r\nExpect: 200-ok\r\n\r\n`,
      417,
      'REQUEST.EXPECTATION_FAILED',
      /Expect: 100-continue/,
    ],
    [
      'no Host on HTTP/1.1 (Node’s own bare 400 before)',
      `GET /api/v1/me HTTP/1.1\r\nAuthorization: Bearer TOKEN\r\nX-Request-Id: RID\r\n\r\n`,
      400,
      'REQUEST.MALFORMED',
      /no Host header.*RFC 9112/,
    ],
    [
      'two Host headers',
      `GET /api/v1/me HTTP/1.1\r\nHost: a\r\nHost: b\r\nAuthorization: Bearer TOKEN\r\nX-Request-Id: RID\r\n\r\n`,
      400,
      'REQUEST.MALFORMED',
      /more than one Host header/,
    ],
    [
      'a Host that is not a host',
      `GET /api/v1/me HTTP/1.1\r\nHost: a b/c\r\nAuthorization: Bearer TOKEN\r\nX-Request-Id: RID\r\n\r\n`,
      400,
      'REQUEST.MALFORMED',
      /not a host name/,
    ],
    [
      'two Authorization headers (a proxy may read the other one)',
      `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\nauthorization: Bearer pgw_someone_else\r\nX-Request-Id: RID\r\n\r\n`,
      400,
      'REQUEST.MALFORMED',
      /more than one authorization header/,
    ],
    [
      'two Content-Type headers',
      `POST /api/v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\nX-Request-Id: RID\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}`,
      400,
      'REQUEST.MALFORMED',
      /more than one Content-Type header/,
    ],
  ])('when a request has %s, then the envelope with its code, the request id, one log line and one audit event', async (_what, text, status, code, details) => {
    const requestId = randomUUID();
    const logs = sut.logs;

    // Connection: close, so that the server ends the exchange as soon as it has answered.
    const answer = await rawExchange(
      sut.baseUrl,
      text.replace('TOKEN', partner).replace('RID', requestId).replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'),
    );

    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ status, data: null, error: { id: expect.stringMatching(UUID), code } });
    expect(answer.body?.error?.details).toMatch(details);
    expect(answer.headers['x-request-id']).toBe(requestId);
    expect(await terminalEventOf(sut, requestId)).toMatchObject({
      phase: 'rejected',
      http_status: status,
      error_code: code,
      error_id: answer.body?.error?.id,
      client_id: null,
    });
    const lines = await waitFor(() => {
      const found = logs.lines.filter((line) => line.errorId === answer.body?.error?.id);
      return found.length > 0 ? found : undefined;
    });
    expect(lines).toHaveLength(1);
  });

  it.each([
    ['HTTP/1.0 without Host (Host is HTTP/1.1’s rule)', `GET /api/v1/me HTTP/1.0\r\nAuthorization: Bearer TOKEN\r\n\r\n`],
    ['Expect: 100-continue', `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\nExpect: 100-Continue\r\n\r\n`],
    ['a Host with a port, and an IPv6 literal', `GET /api/v1/me HTTP/1.1\r\nHost: [::1]:3000\r\nAuthorization: Bearer TOKEN\r\n\r\n`],
  ])('when a request has %s, then it is served', async (_what, text) => {
    const answer = await rawExchange(sut.baseUrl, text.replace('TOKEN', partner).replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'));

    // After an interim 100 Continue, if one was asked for.
    expect(answer.text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it('when a CONNECT arrives (Node closed it without a word before), then a 404 envelope and one log line', async () => {
    const logs = sut.logs;

    const answer = await rawExchange(sut.baseUrl, 'CONNECT provider.example:443 HTTP/1.1\r\nHost: provider.example:443\r\n\r\n');

    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ status: 404, error: { id: expect.stringMatching(UUID), code: 'ROUTE.NOT_FOUND' } });
    expect(answer.closedByServer).toBe(true);
    const lines = await waitFor(() => {
      const found = logs.lines.filter((line) => line.errorId === answer.body?.error?.id);
      return found.length > 0 ? found : undefined;
    });
    expect(lines).toMatchObject([{ method: 'CONNECT', status: 404 }]);
  });

  it('when the headers stall past HEADERS_TIMEOUT_MS, then a 408 envelope and the connection closed', async () => {
    const answer = await rawExchange(sut.baseUrl, `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${partner}\r\n`, { waitMs: 5000 });

    expect(answer.status).toBe(408);
    expect(answer.body).toMatchObject({
      status: 408,
      error: { id: expect.stringMatching(UUID), code: 'REQUEST.TIMEOUT', message: 'The request did not arrive whole in time' },
    });
    expect(answer.closedByServer).toBe(true);
  });

  it('when the body stalls after the headers, then a 408 envelope, the connection closed, and the audit event says 408 under the same error id', async () => {
    const requestId = randomUUID();
    const headers = `POST /api/v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${partner}\r\nX-Request-Id: ${requestId}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"first_name":`;

    const answer = await rawExchange(sut.baseUrl, headers, { waitMs: 5000 });

    expect(answer.status).toBe(408);
    expect(answer.closedByServer).toBe(true);
    expect(answer.headers['x-request-id']).toBe(requestId);
    expect(await terminalEventOf(sut, requestId)).toMatchObject({
      phase: 'rejected',
      http_status: 408,
      error_code: 'REQUEST.TIMEOUT',
      error_id: answer.body?.error?.id,
    });
  });

  it('when the caller hangs up in the middle of its body, then the event says 499 (not 500) and nothing is logged as an error', async () => {
    const requestId = randomUUID();
    const logs = sut.logs;
    const text = `POST /api/v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${partner}\r\nX-Request-Id: ${requestId}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"first_name":`;

    await rawExchange(sut.baseUrl, text, { hangUpAfterMs: 100 });

    expect(await terminalEventOf(sut, requestId)).toMatchObject({ phase: 'rejected', http_status: 499, error_code: 'REQUEST.CLIENT_CLOSED' });
    const lines = await waitFor(() => {
      const found = logs.lines.filter((line) => JSON.stringify(line).includes(requestId));
      return found.length >= 2 ? found : undefined;
    });
    expect(lines?.map((line) => line.level)).not.toContain(50);
    expect(JSON.stringify(lines)).not.toMatch(/"stack"/);
  });
});

describe('The edge: JSON and identifiers', () => {
  let sut: TestApp;
  let partner: string;
  let admin: string;
  let customerId: string;

  beforeAll(async () => {
    sut = await startTestApp();
    partner = await sut.createClient('partner');
    admin = await sut.createClient('admin');
    customerId = await createCustomer(sut.baseUrl, partner);
  });

  afterAll(async () => {
    await sut.close();
  });

  it('when a body says it is compressed, then 415: it is not read as something the caller did not mean', async () => {
    const answer = await callApi(sut.baseUrl, 'POST', '/api/v1/customers', {
      token: partner,
      body: buildCustomerRequest(),
      headers: { 'content-encoding': 'gzip' },
    });

    expect(answer.status).toBe(415);
    expect(answer.body.error?.message).toBe('The content encoding is not supported; send the body uncompressed');
  });

  it('when a body nests 1,300 deep, then 400 naming the limit, not 500', async () => {
    const requestId = randomUUID();
    const rawBody = `{"first_name":${'['.repeat(1300)}${']'.repeat(1300)}}`;

    const answer = await callApi(sut.baseUrl, 'POST', '/api/v1/customers', {
      token: partner,
      requestId,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });

    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toBe('The JSON body is nested deeper than 32 levels');
    expect(await terminalEventOf(sut, requestId)).toMatchObject({ http_status: 400, error_code: 'REQUEST.JSON_TOO_DEEP' });
  });

  it('when a body sends a field twice (a proxy may read the first, JSON.parse keeps the last), then 400 malformed JSON, audited, and nothing reaches the provider', async () => {
    const requestId = randomUUID();
    const first = buildCustomerRequest();
    const rawBody = `${JSON.stringify(first).slice(0, -1)},"reference":${JSON.stringify(randomUUID())}}`;

    const answer = await callApi(sut.baseUrl, 'POST', '/api/v1/customers', {
      token: partner,
      requestId,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });

    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'REQUEST.MALFORMED_JSON', details: expect.stringMatching(/same name twice/) });
    expect(await terminalEventOf(sut, requestId)).toMatchObject({ http_status: 400, error_code: 'REQUEST.MALFORMED_JSON', phase: 'rejected' });
    expect((await journal(sut.sandbox)).filter((entry) => entry.reference === first.reference)).toEqual([]);
  });

  it.each(['constructor', 'valueOf', 'toString', 'hasOwnProperty', 'prototype', '__proto__', 'isPrototypeOf'])(
    'when a body carries the key %s, then it is refused like any unknown field',
    async (key) => {
      const body = `{${JSON.stringify(key)}:{"x":1},${JSON.stringify(buildCustomerRequest()).slice(1)}`;

      const customers = await callApi(sut.baseUrl, 'POST', '/api/v1/customers', {
        token: partner,
        rawBody: body,
        headers: { 'content-type': 'application/json' },
      });
      const accounts = await callApi(sut.baseUrl, 'POST', '/api/v1/bank-accounts', {
        token: partner,
        rawBody: `{${JSON.stringify(key)}:"x",${JSON.stringify(buildBankAccountRequest({ customer_id: customerId })).slice(1)}`,
        headers: { 'content-type': 'application/json' },
      });

      for (const answer of [customers, accounts]) {
        expect(answer.status).toBe(400);
        expect(answer.body.error?.fields).toContainEqual({ field: key, message: `${key} is not an accepted field` });
      }
    },
  );

  it.each([
    ['a NUL', 'a\u0000b'],
    ['a lone surrogate', 'a\ud800b'],
    ['a line break', 'a\nb'],
  ])('when a body carries a key with %s, then 400 names it, and the request is audited', async (_what, key) => {
    const requestId = randomUUID();
    const answer = await callApi(sut.baseUrl, 'POST', '/api/v1/customers', {
      token: partner,
      requestId,
      rawBody: `{${JSON.stringify(key)}:1,${JSON.stringify(buildCustomerRequest()).slice(1)}`,
      headers: { 'content-type': 'application/json' },
    });

    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('REQUEST.VALIDATION_FAILED');
    expect(await terminalEventOf(sut, requestId)).toMatchObject({ http_status: 400, error_code: 'REQUEST.VALIDATION_FAILED' });
  });

  it('when the audit search carries a prototype-ish parameter, then it is refused like any unknown one', async () => {
    const answer = await callApi(sut.baseUrl, 'GET', '/api/v1/audit-events?constructor=1&toString=2', { token: admin });

    expect(answer.status).toBe(400);
    expect(answer.body.error?.fields?.map((f) => f.field).sort()).toEqual(['constructor', 'toString']);
  });

  it('when the caller’s own customer id is written in upper case, then it is the same customer', async () => {
    const balance = await callApi(sut.baseUrl, 'GET', `/api/v1/customers/${customerId.toUpperCase()}/balance`, { token: partner });

    expect(balance.status).toBe(200);
    expect(balance.body.data?.customer_id).toBe(customerId);
  });

  it('when a bank account names its customer and reference in upper case, then they are passed on in lower case', async () => {
    const reference = randomUUID();

    const answer = await callApi(sut.baseUrl, 'POST', '/api/v1/bank-accounts', {
      token: partner,
      body: buildBankAccountRequest({ customer_id: customerId.toUpperCase(), reference: reference.toUpperCase() }),
    });

    expect(answer.status).toBe(201);
    expect(answer.body.data?.reference).toBe(reference);
    expect((await journal(sut.sandbox)).filter((entry) => entry.reference === reference)).toHaveLength(1);
  });

  it.each(['0x10', '1e1', '16abc', '+16', '16.0'])('when the audit search’s limit is %s, then 400: integers are plain decimal', async (limit) => {
    const answer = await callApi(sut.baseUrl, 'GET', `/api/v1/audit-events?limit=${encodeURIComponent(limit)}`, { token: admin });

    expect(answer.status).toBe(400);
    expect(new Set(answer.body.error?.fields?.map((f) => f.field))).toEqual(new Set(['limit']));
  });

  it('when the audit search’s limit is 16, then it is served', async () => {
    expect((await callApi(sut.baseUrl, 'GET', '/api/v1/audit-events?limit=16', { token: admin })).status).toBe(200);
  });
});

describe('The edge: what the provider refuses never gets past validation', () => {
  let sut: TestApp;
  let partner: string;
  let customerId: string;

  beforeAll(async () => {
    sut = await startTestApp();
    partner = await sut.createClient('partner');
    customerId = await createCustomer(sut.baseUrl, partner);
  });

  afterAll(async () => {
    await sut.close();
  });

  it.each([
    ['a lower-case country code', { issued_country_code: 'de' }, 'issued_country_code'],
    ['an unassigned country code', { country: 'XX' }, 'country'],
    ['year 0 as the date of birth', { date_of_birth: '0000-01-01' }, 'date_of_birth'],
    ['year 0 as the issue date', { issued_date: '0000-01-01' }, 'issued_date'],
    ['a name of 51 emoji (102 UTF-16 units)', { issued_by: '😀'.repeat(51) }, 'issued_by'],
    ['a blank name', { issued_by: '   ' }, 'issued_by'],
    ['a name of zero-width characters only', { issued_by: '\u200b\u200d' }, 'issued_by'],
    ['a NUL inside a name', { street: 'Invalidenstrasse\u00001' }, 'street'],
    ['a date of birth after the issue date', { date_of_birth: '2021-06-01', issued_date: '2020-01-15' }, 'date_of_birth'],
    ['an issue date in the future', { issued_date: '2999-01-01' }, 'issued_date'],
  ])('when a bank account has %s, then 400 names the field and nothing reaches the provider', async (_what, change, field) => {
    const body = buildBankAccountRequest({ customer_id: customerId, ...change });

    const answer = await callApi(sut.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body });

    expect(answer.status).toBe(400);
    expect(answer.body.error?.fields?.map((f) => f.field)).toContain(field);
    expect((await journal(sut.sandbox)).filter((entry) => entry.reference === body.reference)).toEqual([]);
  });

  it.each([
    ['a first name of spaces', { first_name: '   ' }, 'first_name'],
    ['a last name with a line break', { last_name: 'Love\nlace' }, 'last_name'],
    ['a lower-case country', { country: 'gb' }, 'country'],
    ['an email with a space', { email: '"ada lovelace"@example.com' }, 'email'],
  ])('when a customer has %s, then 400 names the field', async (_what, change, field) => {
    const answer = await callApi(sut.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: buildCustomerRequest(change) });

    expect(answer.status).toBe(400);
    expect(answer.body.error?.fields?.map((f) => f.field)).toContain(field);
  });

  it('when a name has spaces around it, then it is trimmed and accepted', async () => {
    const answer = await callApi(sut.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: buildCustomerRequest({ first_name: '  Ada ' }) });

    expect(answer.status).toBe(201);
  });
});
