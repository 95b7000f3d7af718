import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';

interface Schema {
  properties: Record<string, { example?: unknown }>;
}
interface OpenApi {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { example?: { status?: unknown; message?: unknown; error?: { id?: unknown } } }> }> }>>;
  components: { schemas: Record<string, Schema> };
}

function exampleOf(schema: Schema): Record<string, unknown> {
  return Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name, property.example]));
}

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
    const answer = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: exampleOf(spec.components.schemas.CreateCustomerRequestDto) });

    expect(answer.status).toBe(201);
  });

  it('when the bank-account example is sent as shown (with a customer of ours), then it passes every rule, the expiry rule included', async () => {
    const customer = await callApi(t.baseUrl, 'POST', '/api/v1/customers', {
      token: partner,
      body: { ...exampleOf(spec.components.schemas.CreateCustomerRequestDto), reference: undefined },
    });
    const body = { ...exampleOf(spec.components.schemas.OpenBankAccountRequestDto), customer_id: customer.body.data!.customer_id };

    const answer = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body });

    expect(answer.status).toBe(201);
  });

  it('when the document is fetched twice, then each copy carries a fresh reference example', async () => {
    const again = (await (await fetch(`${t.baseUrl}/docs-json`, { headers: admin })).json()) as OpenApi;

    expect(again.components.schemas.OpenBankAccountRequestDto.properties.reference.example).not.toEqual(
      spec.components.schemas.OpenBankAccountRequestDto.properties.reference.example,
    );
  });

  it('when every field of the request bodies is listed, then each has a description or an example', () => {
    for (const name of ['CreateCustomerRequestDto', 'OpenBankAccountRequestDto']) {
      for (const [field, property] of Object.entries(spec.components.schemas[name].properties)) {
        expect({ field, example: property.example !== undefined }).toEqual({ field, example: true });
      }
    }
  });

  it('when the partner endpoints are documented, then every error status they answer is listed', () => {
    const statuses = (path: string, method: string) => Object.keys(spec.paths[path][method].responses).sort();

    expect(statuses('/api/v1/bank-accounts', 'post')).toEqual(['201', '400', '401', '403', '404', '409', '413', '415', '422', '429', '502', '503', '504']);
    expect(statuses('/api/v1/customers', 'post')).toEqual(['201', '400', '401', '403', '409', '413', '415', '422', '429', '502', '503', '504']);
    expect(statuses('/api/v1/customers/{customer_id}/balance', 'get')).toEqual(['200', '400', '401', '403', '404', '429', '502', '503', '504']);
    expect(statuses('/api/v1/audit-events', 'get')).toEqual(['200', '400', '401', '403', '429', '503']);
  });

  it('when every documented error response is read, then each shows an example of its own status, in the envelope', () => {
    const documented = Object.entries(spec.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) =>
        Object.entries(operation.responses)
          .filter(([status]) => Number(status) >= 400)
          .map(([status, response]) => ({ where: `${method.toUpperCase()} ${path} ${status}`, status: Number(status), example: response.content?.['application/json']?.example })),
      ),
    );

    expect(documented.length).toBeGreaterThan(20);
    for (const { where, status, example } of documented) {
      expect({ where, status: example?.status }).toEqual({ where, status });
      expect({ where, message: typeof example?.message, id: typeof example?.error?.id }).toEqual({ where, message: 'string', id: 'string' });
    }
    expect(new Set(documented.map((d) => d.status))).toEqual(new Set([400, 401, 403, 404, 409, 413, 415, 422, 429, 502, 503, 504]));
  });
});
