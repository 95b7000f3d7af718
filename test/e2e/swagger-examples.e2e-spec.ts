import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';
import { createDemoCustomer } from '../../dev/demo/demo-customer';
import type { DemoResources } from '../../src/swagger';

interface Schema {
  properties: Record<string, { example?: unknown }>;
}
interface ErrorSchema {
  properties?: { error?: { properties?: { code?: { enum?: string[] } } } };
}
interface Operation {
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; example?: unknown; schema?: { example?: unknown } }[];
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
  responses: Record<
    string,
    {
      content?: Record<
        string,
        {
          schema?: ErrorSchema & { properties?: { message?: { example?: unknown } } };
          example?: { status?: unknown; message?: unknown; error?: { id?: unknown; code?: unknown } };
        }
      >;
    }
  >;
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** The partner's endpoints: what a partner token may call. */
const PARTNER_TAGS = ['customers', 'balances', 'bank-accounts', 'request-log'];

/**
 * The request Swagger UI's "Try it out" sends for an operation, unedited: each path parameter's
 * example, and a body made of each property's example.
 */
function tryItOut(spec: OpenApi, path: string, operation: Operation): { path: string; body?: Record<string, unknown> } {
  let url = path;
  for (const parameter of operation.parameters ?? []) {
    const value = parameter.example ?? parameter.schema?.example;
    if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
  }
  const ref = operation.requestBody?.content['application/json']?.schema.$ref;
  return { path: url, body: ref ? exampleOf(spec.components.schemas[ref.split('/').pop()!]) : undefined };
}

function exampleOf(schema: Schema): Record<string, unknown> {
  return Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name, property.example]));
}

describe('Try it out, as served, in sandbox mode with the demo customer', () => {
  let t: TestApp;
  let partner: string;
  let demo: DemoResources | undefined;
  let served: () => Promise<OpenApi>;

  beforeAll(async () => {
    // An issuer is trusted, so that a partner may bind a customer to one of its end users.
    t = await startTestApp(
      { OIDC_ISSUER: 'http://127.0.0.1:9/issuer', END_USER_PSEUDONYM_KEY: 'c2FuZGJveC1wc2V1ZG9ueW0ta2V5LW9mLTMyLWJ5dGVzISE=' },
      { demo: () => demo },
    );
    partner = await t.createClient('partner');
    demo = await createDemoCustomer(t.baseUrl, partner);
    // Live mode (the test application's) puts the document behind an admin token.
    const admin = { authorization: `Bearer ${await t.createClient('admin')}` };
    served = async () => (await (await fetch(`${t.baseUrl}/docs-json`, { headers: admin })).json()) as OpenApi;
  });
  afterAll(async () => {
    await t.close();
  });

  it('when every partner endpoint is called with the request Swagger UI builds from the served document, then each answers 2xx', async () => {
    const spec = await served();
    const operations = Object.entries(spec.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation.tags?.some((tag) => PARTNER_TAGS.includes(tag)) || path === '/api/v1/me')
        .map(([method, operation]) => ({ method: method.toUpperCase() as 'GET' | 'POST', path, operation })),
    );

    const answers = [];
    for (const { method, path, operation } of operations) {
      const request = tryItOut(spec, path, operation);
      const answer = await callApi(t.baseUrl, method, request.path, { token: partner, body: request.body });
      const documented = operation.responses[String(answer.status)]?.content?.['application/json']?.schema?.properties?.message?.example;
      answers.push({ call: `${method} ${path}`, status: answer.status, code: answer.body.error?.code, message: answer.body.message, documented });
    }

    expect(answers.map((a) => a.call).sort()).toEqual([
      'GET /api/v1/bank-accounts',
      'GET /api/v1/bank-accounts/{id}',
      'GET /api/v1/bank-accounts/{id}/balance',
      'GET /api/v1/customers',
      'GET /api/v1/customers/{customer_id}',
      'GET /api/v1/customers/{customer_id}/balance',
      'GET /api/v1/me',
      'GET /api/v1/requests',
      'GET /api/v1/requests/{request_id}',
      'POST /api/v1/bank-accounts',
      'POST /api/v1/customers',
      'POST /api/v1/customers/{customer_id}/end-user',
    ]);
    // Each answer is the status and the message its documented example shows.
    for (const answer of answers)
      expect(answer).toEqual({
        call: answer.call,
        status: answer.call.startsWith('POST') && !answer.call.endsWith('/end-user') ? 201 : 200,
        code: undefined,
        message: answer.documented,
        documented: answer.documented,
      });
    expect(answers.find((a) => a.call === 'POST /api/v1/bank-accounts')?.message).toBe('Bank account created');
  });

  it('when the document names a customer or an account, then it is the demo customer’s, which belongs to the partner’s tenant', async () => {
    const spec = await served();
    const balance = spec.paths['/api/v1/customers/{customer_id}/balance'].get.parameters!.find((p) => p.name === 'customer_id')!;
    const account = spec.paths['/api/v1/bank-accounts/{id}'].get.parameters!.find((p) => p.name === 'id')!;
    const another = await t.createClient('partner', { tenant: 'another' });

    expect(spec.components.schemas.OpenBankAccountRequest.properties.customer_id.example).toBe(demo!.customerId);
    expect(balance.example).toBe(demo!.customerId);
    expect(account.example).toBe(demo!.bankAccountId);
    expect((await callApi(t.baseUrl, 'GET', `/api/v1/customers/${demo!.customerId}/balance`, { token: another })).status).toBe(404);
    expect((await callApi(t.baseUrl, 'GET', `/api/v1/bank-accounts/${demo!.bankAccountId}`, { token: another })).status).toBe(404);
  });
});

describe('Swagger UI examples', () => {
  let t: TestApp;
  let spec: OpenApi;
  let partner: string;
  let admin: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp();
    partner = await t.createClient('partner');
    admin = { authorization: `Bearer ${await t.createClient('admin')}` };
    spec = (await (await fetch(`${t.baseUrl}/docs-json`, { headers: admin })).json()) as OpenApi;
  });
  afterAll(async () => {
    await t.close();
  });

  it('when the customer example is sent as shown, then the customer is created', async () => {
    const answer = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: exampleOf(spec.components.schemas.CreateCustomerRequest) });

    expect(answer.status).toBe(201);
  });

  it('when the bank-account example is sent as shown (with a customer of ours), then it passes every rule, the expiry rule included', async () => {
    const customer = await callApi(t.baseUrl, 'POST', '/api/v1/customers', {
      token: partner,
      body: { ...exampleOf(spec.components.schemas.CreateCustomerRequest), reference: undefined },
    });
    const body = { ...exampleOf(spec.components.schemas.OpenBankAccountRequest), customer_id: customer.body.data!.customer_id };

    const answer = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body });

    expect(answer.status).toBe(201);
  });

  it('when the document is fetched twice, then each copy carries a fresh reference example', async () => {
    const again = (await (await fetch(`${t.baseUrl}/docs-json`, { headers: admin })).json()) as OpenApi;

    expect(again.components.schemas.OpenBankAccountRequest.properties.reference.example).not.toEqual(
      spec.components.schemas.OpenBankAccountRequest.properties.reference.example,
    );
  });

  it('when every field of the request bodies is listed, then each has a description or an example', () => {
    for (const name of ['CreateCustomerRequest', 'OpenBankAccountRequest']) {
      for (const [field, property] of Object.entries(spec.components.schemas[name].properties)) {
        expect({ field, example: property.example !== undefined }).toEqual({ field, example: true });
      }
    }
  });

  it('when the partner endpoints are documented, then every error status they answer is listed', () => {
    const statuses = (path: string, method: string) => Object.keys(spec.paths[path][method].responses).sort();

    expect(statuses('/api/v1/bank-accounts', 'post')).toEqual([
      '201',
      '400',
      '401',
      '403',
      '404',
      '408',
      '409',
      '413',
      '414',
      '415',
      '417',
      '422',
      '429',
      '431',
      '500',
      '502',
      '503',
      '504',
    ]);
    expect(statuses('/api/v1/customers', 'post')).toEqual([
      '201',
      '400',
      '401',
      '403',
      '404',
      '408',
      '409',
      '413',
      '414',
      '415',
      '417',
      '422',
      '429',
      '431',
      '500',
      '502',
      '503',
      '504',
    ]);
    expect(statuses('/api/v1/customers/{customer_id}/balance', 'get')).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '408',
      '414',
      '415',
      '417',
      '429',
      '431',
      '500',
      '502',
      '503',
      '504',
    ]);
    expect(statuses('/api/v1/audit-events', 'get')).toEqual(['200', '400', '401', '403', '408', '414', '415', '417', '429', '431', '500', '503']);
  });

  it('when every documented error response is read, then each shows an example of its own status, in the envelope', () => {
    const documented = Object.entries(spec.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) =>
        Object.entries(operation.responses)
          .filter(([status]) => Number(status) >= 400)
          .map(([status, response]) => ({
            where: `${method.toUpperCase()} ${path} ${status}`,
            status: Number(status),
            example: response.content?.['application/json']?.example,
            codes: response.content?.['application/json']?.schema?.properties?.error?.properties?.code?.enum,
          })),
      ),
    );

    expect(documented.length).toBeGreaterThan(20);
    for (const { where, status, example, codes } of documented) {
      expect({ where, status: example?.status }).toEqual({ where, status });
      expect({ where, message: typeof example?.message, id: typeof example?.error?.id }).toEqual({ where, message: 'string', id: 'string' });
      // Every example carries one of its response's codes (the 401 too: the provider's envelope, with the code added).
      expect({ where, listed: codes?.includes(example?.error?.code as string) }).toEqual({ where, listed: true });
    }
    expect(new Set(documented.map((d) => d.status))).toEqual(new Set([400, 401, 403, 404, 408, 409, 413, 414, 415, 417, 422, 429, 431, 500, 502, 503, 504]));
  });
});
