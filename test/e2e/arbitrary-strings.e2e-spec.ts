import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { startTestApp, TestApp } from '../support/app';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';

/**
 * Every string field of every body, every query parameter and every path parameter of the API (as
 * openapi.json lists them) is sent arbitrary text: lone and paired surrogates, every plane, control
 * characters, byte sequences that are not UTF-8. Whatever arrives, the answer is the envelope with
 * 2xx or a 4xx that says what was wrong — never a 5xx, which would mean a validator threw or the
 * provider refused something the gateway let through.
 */
interface OpenApi {
  paths: Record<
    string,
    Record<string, { parameters?: { in: string; name: string }[]; requestBody?: { content: Record<string, { schema: { $ref: string } }> } }>
  >;
  components: { schemas: Record<string, { properties: Record<string, unknown> }> };
}
const openapi = JSON.parse(readFileSync(join(process.cwd(), 'openapi.json'), 'utf8')) as OpenApi;

/** A UTF-16 code unit or a code point of any kind: what JSON.stringify turns into a string literal. */
const unit = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x7f, max: 0x9f }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xa0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  fc.constantFrom('\u2028', '\u2029', '\ufeff', '\ufffd', '\u200b', '😀', '@', '.', '-', ':', ' '),
);
const anyText = fc.string({ unit, maxLength: 40 });
/** Stands for the field's accepted value, put in at send time (each run has a fresh reference). */
const VALID = '\u27e8valid\u27e9';
/** Arbitrary text alone, or around the accepted value (so that later rules are reached too). */
const aroundValid = fc.oneof(
  anyText,
  anyText.map((text) => `${VALID}${text}`),
  anyText.map((text) => `${text}${VALID}`),
);
/** One to three of `fields`, each with arbitrary text. */
const changesOf = (fields: string[]) =>
  fc
    .uniqueArray(fc.constantFrom(...fields), { minLength: 1, maxLength: 3 })
    .chain((chosen) => fc.tuple(...chosen.map(() => aroundValid)).map((values) => chosen.map((field, i) => [field, values[i]] as const)));

/** Bytes for a URL: any byte, percent-encoded (lone surrogates as CESU-8, overlong forms, 0xFF). */
const anyBytes = fc.oneof(
  fc.uint8Array({ maxLength: 24 }).map((bytes) => Buffer.from(bytes)),
  anyText.map((text) => Buffer.from(text, 'utf8')),
  fc.constantFrom([0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xff, 0xfe], [0x80], [0xf4, 0x90, 0x80, 0x80], [0x25, 0x30, 0x30]).map((bytes) => Buffer.from(bytes)),
);
/** A value each query parameter accepts, so that arbitrary bytes are also tried next to one. */
const ACCEPTED_QUERY: Record<string, string> = {
  reference: '6f1c2b9e-8d4a-4f7e-9b2a-3c5d7e9f1a2b',
  error_id: 'abc-123',
  customer_id: '6f1c2b9e-8d4a-4f7e-9b2a-3c5d7e9f1a2b',
  operation: 'balance.read',
  outcome: 'succeeded',
  client: '6f1c2b9e-8d4a-4f7e-9b2a-3c5d7e9f1a2b',
  from: '2026-01-01',
  to: '2099-01-01T00:00:00Z',
  limit: '10',
  older_than: '5m',
  since: '7d',
  return_to: '/app/',
  state: 'c3RhdGU',
  code: 'Y29kZQ',
  iss: 'http://127.0.0.1/',
};
const queryValueOf = (name: string) => {
  const accepted = Buffer.from(ACCEPTED_QUERY[name] ?? '', 'utf8');
  return fc.oneof(
    anyBytes,
    fc.constant(accepted),
    anyBytes.map((bytes) => Buffer.concat([accepted, bytes])),
  );
};
const percentEncoded = (bytes: Buffer) => [...bytes].map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`).join('');

/** What the service may answer to arbitrary input: success, or the client error that names it. */
const ACCEPTABLE = [200, 201, 400, 404];
/** A customer belongs to one end user: once bound, binding it to another subject is a 409 that says so. */
const ALSO_ACCEPTABLE: Record<string, number[]> = {
  'POST /api/v1/customers/{customer_id}/end-user': [409],
  // A login starts with a redirect to the OpenID provider.
  'GET /api/v1/session/login': [302],
  // No session cookie: only a browser session logs out (401 SESSION.ENDED).
  'POST /api/v1/session/logout': [401],
  // A redelivery is accepted (202): its attempts happen after the answer.
  'POST /api/v1/webhook-endpoints/{id}/redeliveries': [202],
};

describe('arbitrary strings in every field of every body, query and path', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;
  let partner: string;
  let admin: string;
  let customerId: string;
  let endpointId: string;
  const statuses = new Map<string, Set<number>>();

  async function send(what: string, method: string, path: string, token: string, body?: string, type = 'application/json'): Promise<void> {
    const response = await fetch(`${t.baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
      body,
    });
    const envelope = (await response.json()) as { status: number; error: { id: string; code: string } | null };
    if (!statuses.has(what)) statuses.set(what, new Set());
    statuses.get(what)!.add(response.status);
    const acceptable = [...ACCEPTABLE, ...(ALSO_ACCEPTABLE[what] ?? [])];
    expect(acceptable.includes(response.status) ? 'acceptable' : `${what}: ${response.status} ${envelope.error?.code}`).toBe('acceptable');
    expect(envelope.status).toBe(response.status);
    if (response.status >= 400) expect(envelope.error?.id).toMatch(/^[0-9a-f-]{36}$/);
  }

  /** Base requests that are accepted as they are; each run changes some of their fields. */
  /** `accepted`: a field whose valid value leaves the body accepted: the first run sends it so, whatever the seed. */
  const bodies: Record<string, { token: () => string; base: () => Record<string, unknown>; customer?: true; endpoint?: true; accepted?: string }> = {
    'POST /api/v1/customers': { token: () => partner, base: () => buildCustomerRequest() },
    'POST /api/v1/bank-accounts': { token: () => partner, base: () => buildBankAccountRequest({ customer_id: customerId }) },
    'POST /api/v1/customers/{customer_id}/end-user': { token: () => partner, base: () => ({ subject: 'demo' }), customer: true },
    'POST /api/v1/session/logout': { token: () => partner, base: () => ({ return_to: '/app/' }) },
    'POST /api/v1/end-user-sessions/end': { token: () => admin, base: () => ({ end_user: 'demo' }) },
    'POST /api/v1/webhook-endpoints': { token: () => partner, base: () => ({ url: 'https://partner.example/hook' }), accepted: 'url' },
    'PATCH /api/v1/webhook-endpoints/{id}': { token: () => partner, base: () => ({ description: 'Ledger' }), endpoint: true, accepted: 'description' },
    'POST /api/v1/webhook-endpoints/{id}/rotate-secret': { token: () => partner, base: () => ({ overlap_hours: 1 }), endpoint: true },
    'POST /api/v1/webhook-endpoints/{id}/redeliveries': { token: () => partner, base: () => ({ from: '2026-01-01', to: '2099-01-01' }), endpoint: true },
  };
  /** The OpenID provider's form posts (application/x-www-form-urlencoded). */
  const forms: Record<string, { fields: string[] }> = {
    'POST /api/v1/session/backchannel-logout': { fields: ['logout_token'] },
  };
  const queries: Record<string, { token: () => string }> = {
    'GET /api/v1/audit-events': { token: () => admin },
    'GET /api/v1/audit-checkpoints': { token: () => admin },
    'GET /api/v1/audit-access-report': { token: () => admin },
    'GET /api/v1/unresolved-calls': { token: () => admin },
    'GET /api/v1/end-user-sessions': { token: () => admin },
    'GET /api/v1/session/login': { token: () => partner },
    'GET /api/v1/session/callback': { token: () => partner },
    'GET /api/v1/requests': { token: () => partner },
    'GET /api/v1/checkpoints/consistency': { token: () => partner },
    'GET /api/v1/customers': { token: () => partner },
    'GET /api/v1/bank-accounts': { token: () => partner },
    'GET /api/v1/events': { token: () => partner },
    'GET /api/v1/webhook-endpoints': { token: () => partner },
  };
  const paths: Record<string, { token: () => string }> = {
    'GET /api/v1/audit-events/{id}': { token: () => admin },
    'GET /api/v1/customers/{customer_id}/balance': { token: () => partner },
    'GET /api/v1/customers/{customer_id}': { token: () => partner },
    'GET /api/v1/bank-accounts/{id}': { token: () => partner },
    'GET /api/v1/bank-accounts/{id}/balance': { token: () => partner },
    'GET /api/v1/requests/{request_id}': { token: () => partner },
    'GET /api/v1/receipts/{event_id}': { token: () => partner },
    'GET /api/v1/events/{id}': { token: () => partner },
    'GET /api/v1/events/{id}/deliveries': { token: () => partner },
    'GET /api/v1/webhook-endpoints/{id}': { token: () => partner },
    'GET /api/v1/webhook-endpoints/{id}/deliveries': { token: () => partner },
    'DELETE /api/v1/webhook-endpoints/{id}': { token: () => partner },
  };

  const operations = Object.entries(openapi.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, method, path, op })),
  );

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
    t = await startTestApp({
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_PER_IP_PER_MINUTE: '1000000',
      RATE_LIMIT_REQUEST_LOG_PER_MINUTE: '1000000',
      // A trusted issuer, so that a partner may bind a customer to its end users, and browser sessions through it.
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: 'partner-web',
      OIDC_CLIENT_SECRET: 'partner-web-secret',
      SESSION_KEY: 'YXJiaXRyYXJ5LXN0cmluZ3Mtc2Vzc2lvbnMta2V5LTMyYiE=',
      END_USER_PSEUDONYM_KEY: 'YXJiaXRyYXJ5LXN0cmluZ3Mta2V5LW9mLTMyLWJ5dGVzISE=',
    });
    await idp.setWebOrigins([t.baseUrl]);
    partner = await t.createClient('partner');
    admin = await t.createClient('admin');
    customerId = await createCustomer(t.baseUrl, partner);
    const made = await callApi<{ id: string }>(t.baseUrl, 'POST', '/api/v1/webhook-endpoints', {
      token: partner,
      body: { url: 'https://partner.example/hook' },
    });
    endpointId = made.body.data!.id;
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('when openapi.json lists an operation with a body, a query or a path parameter, then this suite sends it arbitrary strings', () => {
    const withInput = operations.filter(({ op }) => op.requestBody || (op.parameters ?? []).some((p) => p.in !== 'header')).map(({ key }) => key);

    expect(withInput.sort()).toEqual([...Object.keys(bodies), ...Object.keys(forms), ...Object.keys(queries), ...Object.keys(paths)].sort());
  });

  it('when a body’s string fields hold arbitrary text, then the answer is 2xx or a 4xx naming the problem, never a 5xx', async () => {
    for (const [key, { token, base, customer, endpoint, accepted }] of Object.entries(bodies)) {
      const operation = operations.find((candidate) => candidate.key === key)!;
      const { op } = operation;
      const path = customer ? operation.path.replace('{customer_id}', customerId) : endpoint ? operation.path.replace('{id}', endpointId) : operation.path;
      const schema = openapi.components.schemas[op.requestBody!.content['application/json'].schema.$ref.split('/').pop()!];
      const fields = Object.keys(schema.properties);
      await fc.assert(
        fc.asyncProperty(changesOf(fields), async (changes) => {
          const body = base();
          for (const [field, text] of changes) body[field] = text.replace(VALID, typeof body[field] === 'string' ? body[field] : '');
          await send(key, operation.method.toUpperCase(), path, token(), JSON.stringify(body));
        }),
        // The binding is accepted once per customer (any other subject after it is a 409): its first run, an example,
        // binds the subject as it is, so that the property is seen to hold over an accepted body too, whatever the seed.
        { numRuns: 40 * fields.length, examples: customer ? [[[['subject', VALID] as const]]] : accepted ? [[[[accepted, VALID] as const]]] : [] },
      );
    }
    // The property held over answers of both kinds: accepted bodies and refused ones.
    expect([...statuses.get('POST /api/v1/customers')!].sort()).toEqual([201, 400]);
    expect([...statuses.get('POST /api/v1/bank-accounts')!].sort()).toEqual(expect.arrayContaining([201, 400]));
    expect([...statuses.get('POST /api/v1/customers/{customer_id}/end-user')!].sort()).toEqual(expect.arrayContaining([200, 400]));
    expect([...statuses.get('POST /api/v1/webhook-endpoints')!].sort()).toEqual(expect.arrayContaining([201, 400]));
    expect([...statuses.get('PATCH /api/v1/webhook-endpoints/{id}')!].sort()).toEqual(expect.arrayContaining([200, 400]));
  });

  it('when a form the OpenID provider posts holds arbitrary text, then the answer is a 400 naming the problem, never a 5xx', async () => {
    for (const [key, { fields }] of Object.entries(forms)) {
      const { path } = operations.find((operation) => operation.key === key)!;
      await fc.assert(
        fc.asyncProperty(changesOf(fields), async (changes) => {
          const form = new URLSearchParams(changes.map(([field, text]): [string, string] => [field, text.replace(VALID, 'a.b.c')]));
          await send(key, 'POST', path, partner, form.toString(), 'application/x-www-form-urlencoded');
        }),
        { numRuns: 60 },
      );
    }
    expect([...statuses.get('POST /api/v1/session/backchannel-logout')!]).toEqual([400]);
  });

  it('when query parameters hold arbitrary bytes, then the answer is 2xx or 400, never a 5xx', async () => {
    for (const [key, { token }] of Object.entries(queries)) {
      const { op, path } = operations.find((operation) => operation.key === key)!;
      const names = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      await fc.assert(
        fc.asyncProperty(
          fc
            .uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: 3 })
            .chain((chosen) => fc.tuple(...chosen.map((name) => queryValueOf(name).map((value) => `${name}=${percentEncoded(value)}`)))),
          async (pairs) => {
            await send(key, 'GET', `${path}?${pairs.join('&')}`, token());
          },
        ),
        // A login's first runs, examples, return to this service and to another origin: both answers are seen, whatever the seed.
        {
          numRuns: 40 * names.length,
          examples: key === 'GET /api/v1/session/login' ? [[['return_to=%2Fapp%2F']], [['return_to=https%3A%2F%2Fevil.example%2F']]] : [],
        },
      );
    }
    expect([...statuses.get('GET /api/v1/audit-events')!].sort()).toEqual([200, 400]);
    expect([...statuses.get('GET /api/v1/session/login')!].sort()).toEqual([302, 400]);
  });

  it('when a path parameter holds arbitrary bytes, then the answer is 400 or 404, never a 5xx', async () => {
    for (const [key, { token }] of Object.entries(paths)) {
      const { path, method } = operations.find((operation) => operation.key === key)!;
      await fc.assert(
        fc.asyncProperty(anyBytes, async (bytes) => {
          await send(key, method.toUpperCase(), path.replace(/\{[^}]+\}/, percentEncoded(bytes)), token());
        }),
        { numRuns: 100 },
      );
    }
  });
});
