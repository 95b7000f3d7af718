import { startTestApp, TestApp } from '../support/app';
import { buildBankAccountRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';

const basic = (password: string) => `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;

describe('Security headers and CORS', () => {
  let sut: TestApp;

  beforeAll(async () => {
    sut = await startTestApp({ CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' });
  });

  afterAll(async () => {
    await sut.close();
  });

  it('when any response leaves (an answer, a refusal, a 404), then it carries helmet’s headers and no x-powered-by', async () => {
    const token = await sut.createClient('partner');

    const responses = [
      await fetch(`${sut.baseUrl}/health/live`),
      await fetch(`${sut.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } }),
      await fetch(`${sut.baseUrl}/api/v1/me`),
      await fetch(`${sut.baseUrl}/api/v1/nowhere`, { headers: { authorization: `Bearer ${token}` } }),
      await fetch(`${sut.baseUrl}/api/v1//me`),
    ];
    expect(responses.map((response) => response.status)).toEqual([200, 200, 401, 404, 400]);
    for (const response of responses) {
      expect(response.headers.get('x-powered-by')).toBeNull();
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      expect(response.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(response.headers.get('content-security-policy')).not.toContain('upgrade-insecure-requests');
    }
  });

  it('when a listed origin sends a preflight, then it is allowed with the headers a partner app needs', async () => {
    const response = await fetch(`${sut.baseUrl}/api/v1/bank-accounts`, {
      method: 'OPTIONS',
      headers: { origin: 'https://admin.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });

    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://admin.example.com');
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    // A browser app may name its API version and read the one it was answered under.
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('gateway-version');
    const answered = await fetch(`${sut.baseUrl}/health/live`, { headers: { origin: 'https://admin.example.com' } });
    expect(answered.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('gateway-version');
  });

  it('when an unlisted origin calls, then no CORS header allows it', async () => {
    const preflight = await fetch(`${sut.baseUrl}/api/v1/bank-accounts`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example.net', 'access-control-request-method': 'POST' },
    });
    const simple = await fetch(`${sut.baseUrl}/health/live`, { headers: { origin: 'https://evil.example.net' } });

    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('when a listed origin makes a simple request, then the response names that origin and exposes the request id', async () => {
    const response = await fetch(`${sut.baseUrl}/health/live`, { headers: { origin: 'https://app.example.com' } });

    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(response.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
    expect(response.headers.get('access-control-expose-headers')).toContain('RateLimit-Policy');
    expect(response.headers.get('access-control-expose-headers')).toContain('Audit-Receipt');
  });
});

describe('Docs and metrics in live mode', () => {
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

  it.each(['/docs', '/docs-json', '/docs-yaml', '/metrics'])(
    'when %s is asked for without a token, then 401 in the envelope with a challenge',
    async (path) => {
      const response = await fetch(`${sut.baseUrl}${path}`);
      const body = (await response.json()) as { status: number; error: { id: string } };

      expect(response.status).toBe(401);
      expect(body.status).toBe(401);
      expect(body.error.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.headers.get('www-authenticate')).toMatch(path === '/metrics' ? /^Bearer / : /^Basic /);
    },
  );

  it('when a partner token asks for them, then 403', async () => {
    for (const path of ['/docs-json', '/metrics']) {
      const response = await fetch(`${sut.baseUrl}${path}`, { headers: { authorization: `Bearer ${partner}` } });
      expect(response.status).toBe(403);
    }
  });

  it('when an admin token comes as Bearer, or as the Basic password a browser prompts for, then they are served', async () => {
    const spec = await fetch(`${sut.baseUrl}/docs-json`, { headers: { authorization: `Bearer ${admin}` } });
    const ui = await fetch(`${sut.baseUrl}/docs`, { headers: { authorization: basic(admin) } });
    const metrics = await fetch(`${sut.baseUrl}/metrics`, { headers: { authorization: `Bearer ${admin}` } });

    expect(spec.status).toBe(200);
    expect(((await spec.json()) as { openapi: string }).openapi).toMatch(/^3\./);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger-ui');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
  });

  it('when a wrong password comes as Basic, then 401', async () => {
    const response = await fetch(`${sut.baseUrl}/docs`, { headers: { authorization: basic('not-a-token') } });

    expect(response.status).toBe(401);
  });
});

describe('Docs and metrics opened by configuration', () => {
  let sut: TestApp;

  beforeAll(async () => {
    sut = await startTestApp({ DOCS_PUBLIC: 'true', METRICS_PUBLIC: 'true' });
  });

  afterAll(async () => {
    await sut.close();
  });

  it('when DOCS_PUBLIC and METRICS_PUBLIC are set, then /docs-json and /metrics answer without a token', async () => {
    expect((await fetch(`${sut.baseUrl}/docs-json`)).status).toBe(200);
    expect((await fetch(`${sut.baseUrl}/metrics`)).status).toBe(200);
  });
});

describe('Metrics', () => {
  let sut: TestApp;
  let partner: string;

  const scrape = async () => (await fetch(`${sut.baseUrl}/metrics`)).text();

  beforeAll(async () => {
    sut = await startTestApp({ METRICS_PUBLIC: 'true' });
    partner = await sut.createClient('partner');
  });

  afterAll(async () => {
    await sut.close();
  });

  it('when requests are served, then their duration is counted by method, route pattern and status', async () => {
    const customerId = await createCustomer(sut.baseUrl, partner);
    await callApi(sut.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token: partner });
    await callApi(sut.baseUrl, 'GET', '/api/v1/me');

    const text = await scrape();

    expect(text).toMatch(/^http_request_duration_seconds_count\{method="POST",route="\/api\/v1\/customers",status="201"\} 1$/m);
    expect(text).toMatch(/^http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/customers\/:customer_id\/balance",status="200"\} 1$/m);
    expect(text).toMatch(/^http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/me",status="401"\} 1$/m);
    expect(text).not.toContain(customerId);
    expect(text).toMatch(/^upstream_request_duration_seconds_count\{operation="customer.create",outcome="success"\} 1$/m);
    expect(text).toMatch(/^upstream_request_duration_seconds_count\{operation="balance.read",outcome="success"\} 1$/m);
    expect(text).toMatch(/^upstream_circuit_state\{state="closed"\} 1$/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
  });

  it('when errors are answered, then each is counted by its code; and readiness is exported once it has been checked', async () => {
    expect(await scrape()).not.toMatch(/^health_ready /m);
    await callApi(sut.baseUrl, 'GET', '/api/v1/nowhere', { token: partner });
    await callApi(sut.baseUrl, 'GET', '/api/v1/nowhere', { token: partner });
    await callApi(sut.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: { email: 'not-an-address' } });
    expect((await fetch(`${sut.baseUrl}/health/ready`)).status).toBe(200);

    const text = await scrape();

    expect(text).toMatch(/^api_errors_total\{code="ROUTE.NOT_FOUND"\} 2$/m);
    expect(text).toMatch(/^api_errors_total\{code="REQUEST.VALIDATION_FAILED"\} 1$/m);
    expect(text).toMatch(/^health_ready 1$/m);
    expect(text).toMatch(/^audit_unresolved_calls 0$/m);
  });

  it('when a request is replayed from the idempotency store, then the replay is counted (and a valid request logs no error)', async () => {
    const logs = sut.logs.text.length;
    const customerId = await createCustomer(sut.baseUrl, partner);
    const body = buildBankAccountRequest({ customer_id: customerId });

    await callApi(sut.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body });
    await callApi(sut.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body });
    await callApi(sut.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body });

    expect(await scrape()).toMatch(/^idempotency_replays_total\{operation="bank_account.create"\} 2$/m);
    // Validation looks its constraints up in Nest's container; a miss there is not an error.
    expect(sut.logs.text.slice(logs)).not.toContain('"level":50');
  });

  it('when an audit event cannot be written, then the failure is counted', async () => {
    expect(await scrape()).toMatch(/^audit_write_failures_total 0$/m);
    const customerId = await createCustomer(sut.baseUrl, partner);
    await sut.asOwner('ALTER TABLE audit_events RENAME TO audit_events_away');
    let status: number;
    try {
      status = (await callApi(sut.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body: buildBankAccountRequest({ customer_id: customerId }) }))
        .status;
    } finally {
      await sut.asOwner('ALTER TABLE audit_events_away RENAME TO audit_events');
    }

    expect(status).toBe(503);
    expect(await scrape()).toMatch(/^audit_write_failures_total 2$/m); // the attempted event, then the terminal one
  });
});
