import { Test, TestingModule } from '@nestjs/testing';
import { MetricsModule } from '../../src/metrics/metrics.module';
import { PrometheusMetrics } from '../../src/metrics/prometheus.metrics';
import { problemOf } from '../../src/common/http/error-envelope.filter';
import { inRequestScope, RequestRecord } from '../../src/common/domain/request-record';
import { UpstreamError } from '../../src/common/domain/upstream';
import { validateEnvironment } from '../../src/config/load-config';
import { generateSandboxKeys } from '../../dev/sandbox/sandbox-keys';
import { RunningSandbox, startSandbox } from '../../dev/sandbox/sandbox.runner';
import { isValidIban } from '../../dev/sandbox/sandbox-accounts';
import { ProviderBalanceAdapter } from '../../src/partner-api/balances/provider/provider-balance.adapter';
import { ProviderBankAccountAdapter } from '../../src/partner-api/bank-accounts/provider/provider-bank-account.adapter';
import { ProviderCustomerAdapter } from '../../src/partner-api/customers/provider/provider-customer.adapter';
import { UpstreamHttpClient } from '../../src/upstream/upstream-http.client';
import { UpstreamModule } from '../../src/upstream/upstream.module';
import { sandboxUpstreamSettings, UpstreamSettings } from '../../src/upstream/upstream.settings';
import { buildNewCustomer, buildOpenBankAccount } from '../support/builders';
import { nestLogsOfEachTest } from '../support/nest-logs';
import { freePort } from '../support/processes';
import { clearSandbox, injectFault, journal } from '../support/sandbox';

interface Adapters {
  customers: ProviderCustomerAdapter;
  balances: ProviderBalanceAdapter;
  accounts: ProviderBankAccountAdapter;
  client: UpstreamHttpClient;
  metrics: PrometheusMetrics;
}

/** What a failed call threw, and the status a partner would see for it. */
async function failureOf(call: Promise<unknown>): Promise<{ error: UpstreamError; status: number; retryAfter?: number }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    const problem = problemOf(error);
    return { error, status: problem.status, retryAfter: problem.retryAfterSeconds };
  }
  throw new Error('expected the call to fail');
}

describe('outbound adapter against the sandbox over loopback', () => {
  const logs = nestLogsOfEachTest();
  const keys = generateSandboxKeys();
  let sandbox: RunningSandbox;
  const modules: TestingModule[] = [];

  async function adapters(env: Record<string, string> = {}, tweak: (s: UpstreamSettings) => UpstreamSettings = (s) => s): Promise<Adapters> {
    const settings = tweak(sandboxUpstreamSettings(validateEnvironment({ UPSTREAM_RETRY_MAX: '2', ...env }), sandbox));
    // The provider's protocol, and each slice's adapter over it, as the slices' modules provide them.
    const module = await Test.createTestingModule({
      imports: [MetricsModule, UpstreamModule.forRoot(settings)],
      providers: [ProviderCustomerAdapter, ProviderBalanceAdapter, ProviderBankAccountAdapter],
    }).compile();
    await module.init();
    modules.push(module);
    return {
      customers: module.get(ProviderCustomerAdapter),
      balances: module.get(ProviderBalanceAdapter),
      accounts: module.get(ProviderBankAccountAdapter),
      client: module.get(UpstreamHttpClient),
      metrics: module.get(PrometheusMetrics),
    };
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, keys });
  });
  afterEach(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close()));
    await clearSandbox(sandbox);
  });
  afterAll(async () => {
    await sandbox.close();
  });

  describe('the calls', () => {
    it('when a customer is created, then the sandbox journals a signed, encrypted POST with the reference and request id', async () => {
      const { customers } = await adapters();
      const customer = buildNewCustomer();

      const context = new RequestRecord('req-customer-1');

      const created = await inRequestScope(context, () => customers.create(customer));

      expect(created.customerId).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.reference).toBe(customer.reference);
      // What the request's audit event will say about the call.
      expect(context.upstream).toEqual({ status: 201, latencyMs: expect.any(Number) });
      expect(await journal(sandbox)).toEqual([
        expect.objectContaining({
          method: 'POST',
          path: '/api/v1/customer',
          reference: customer.reference,
          request_id: 'req-customer-1',
          signature: 'valid',
          encrypted: true,
          status: 201,
        }),
      ]);
    });

    it('when the balance of a known customer is read, then it comes back as decimal strings', async () => {
      const { customers, balances } = await adapters();
      const value = await inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer()));

      const context = new RequestRecord('req-balance-1');

      const balance = await inRequestScope(context, () => balances.read(value.customerId));

      expect(balance).toMatchObject({ customerId: value.customerId, currency: 'EUR', available: '0.00', current: '0.00' });
      expect(context.upstream).toEqual({ status: 200, latencyMs: expect.any(Number) });
    });

    it('when the customer is unknown to the provider, then not_found (404)', async () => {
      const { balances } = await adapters();

      const { error, status } = await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read('00000000-0000-4000-8000-000000000000')));

      expect(error.code).toBe('UPSTREAM.NOT_FOUND');
      expect(status).toBe(404);
      expect(error.upstream.errorId).toMatch(/^[0-9a-f-]{36}$/);
    });

    it.each([['EUR' as const], ['GBP' as const]])('when a %s account is opened, then the sandbox returns its account details', async (currency) => {
      const { customers, accounts } = await adapters();
      const value = await inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer()));

      const opened = await inRequestScope(new RequestRecord('req-test'), () => accounts.open(buildOpenBankAccount({ customerId: value.customerId, currency })));

      expect(opened).toMatchObject({ customerId: value.customerId, currency, status: 'active' });
      if (currency === 'EUR') expect(isValidIban(opened.iban!)).toBe(true);
      else expect(opened).toMatchObject({ sortCode: expect.stringMatching(/^\d{2}-\d{2}-\d{2}$/), accountNumber: expect.stringMatching(/^\d{8}$/) });
    });

    it('when the bank-account path is configured under /api/v1, then that path is called', async () => {
      const { customers, accounts } = await adapters({ UPSTREAM_BANK_ACCOUNT_PATH: '/api/v1/payments/banks/account' });
      const value = await inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer()));

      await inRequestScope(new RequestRecord('req-test'), () => accounts.open(buildOpenBankAccount({ customerId: value.customerId })));

      expect((await journal(sandbox)).map((e) => e.path)).toContain('/api/v1/payments/banks/account');
    });

    it('when encryption is none, then the JSON is sent as it is and still signed', async () => {
      const { customers } = await adapters({ UPSTREAM_ENCRYPTION: 'none' });

      await inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer()));

      expect(await journal(sandbox)).toEqual([expect.objectContaining({ encrypted: false, signature: 'valid', status: 201 })]);
    });

    it('when the provider refuses the payload (a past expiry date), then rejected as 502 and not retried', async () => {
      const { customers, accounts } = await adapters();
      const value = await inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer()));
      await clearSandbox(sandbox);

      const { error, status } = await failureOf(
        inRequestScope(new RequestRecord('req-test'), () =>
          accounts.open(buildOpenBankAccount({ customerId: value.customerId, expirationDate: '2020-01-01' })),
        ),
      );

      expect(error).toMatchObject({ code: 'UPSTREAM.REJECTED', outcome: 'rejected' });
      expect(error.upstream.status).toBe(400);
      expect(status).toBe(502);
      expect(await journal(sandbox)).toHaveLength(1);
    });

    it('when a reference is reused, then the provider answers 409 and the gateway reports a conflict it cannot hide', async () => {
      const { customers } = await adapters();
      const customer = buildNewCustomer();
      await inRequestScope(new RequestRecord('req-test'), () => customers.create(customer));

      const { error, status } = await failureOf(inRequestScope(new RequestRecord('req-test'), () => customers.create(customer)));

      expect(error).toMatchObject({ code: 'UPSTREAM.CONFLICT', outcome: 'rejected' });
      expect(status).toBe(502);
    });
  });

  describe('fault classes', () => {
    it('when the provider is slower than the timeout, then a GET fails with 504 and a POST with an unknown outcome', async () => {
      const { balances, customers } = await adapters({ UPSTREAM_TIMEOUT_MS: '200', UPSTREAM_RETRY_MAX: '0' });
      await injectFault(sandbox, { latency_ms: 1000 });

      const read = await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read('00000000-0000-4000-8000-000000000000')));
      const write = await failureOf(inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer())));

      expect(read.error).toMatchObject({ code: 'UPSTREAM.TIMEOUT', outcome: 'failed' });
      expect(read.status).toBe(504);
      expect(write.error).toMatchObject({ code: 'UPSTREAM.TIMEOUT', outcome: 'unknown' });
      expect(write.status).toBe(504);
    });

    it('when the provider answers 5xx, then a GET is retried twice and then fails with 502', async () => {
      const { balances } = await adapters();
      await injectFault(sandbox, { path: '/balance/', status: 503 });

      const { error, status } = await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read('00000000-0000-4000-8000-000000000000')));

      expect(error).toMatchObject({ code: 'UPSTREAM.SERVER_ERROR', outcome: 'failed' });
      expect(status).toBe(502);
      expect(await journal(sandbox)).toHaveLength(3);
    });

    it('when a 5xx is passing, then the retried GET succeeds', async () => {
      const { customers, balances } = await adapters();
      const value = await inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer()));
      await clearSandbox(sandbox);
      await injectFault(sandbox, { path: '/balance/', status: 500, count: 1 });

      const balance = await inRequestScope(new RequestRecord('req-test'), () => balances.read(value.customerId));

      expect(balance.customerId).toBe(value.customerId);
      expect((await journal(sandbox)).map((e) => e.status)).toEqual([500, 200]);
    });

    it('when the provider answers 5xx to a POST, then it is not retried and the outcome is unknown', async () => {
      const { customers } = await adapters();
      await injectFault(sandbox, { path: '/customer$', status: 500 });

      const { error, status } = await failureOf(inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer())));

      expect(error).toMatchObject({ code: 'UPSTREAM.SERVER_ERROR', outcome: 'unknown' });
      expect(status).toBe(502);
      expect(await journal(sandbox)).toHaveLength(1);
    });

    it('when the provider answers 429, then a GET is retried and then fails with 503 and its Retry-After', async () => {
      const { balances } = await adapters();
      await injectFault(sandbox, { path: '/balance/', status: 429, retry_after: 7 });

      const { error, status, retryAfter } = await failureOf(
        inRequestScope(new RequestRecord('req-test'), () => balances.read('00000000-0000-4000-8000-000000000000')),
      );

      expect(error.code).toBe('UPSTREAM.RATE_LIMITED');
      expect(status).toBe(503);
      expect(retryAfter).toBe(7);
      expect(await journal(sandbox)).toHaveLength(3);
    });

    it('when the connection is dropped, then a GET is retried and a POST fails with an unknown outcome, not retried', async () => {
      const { balances, customers } = await adapters();
      await injectFault(sandbox, { drop: true });

      const read = await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read('00000000-0000-4000-8000-000000000000')));
      const readAttempts = (await journal(sandbox)).length;
      await clearSandbox(sandbox);
      await injectFault(sandbox, { drop: true });
      const write = await failureOf(inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer())));

      expect(read.error).toMatchObject({ code: 'UPSTREAM.CONNECTION_LOST', outcome: 'failed' });
      expect(read.status).toBe(502);
      expect(readAttempts).toBe(3);
      expect(write.error).toMatchObject({ code: 'UPSTREAM.CONNECTION_LOST', outcome: 'unknown' });
      expect(await journal(sandbox)).toHaveLength(1);
    });

    it('when the provider answers with a body that is not JSON, then 502 with a clear message', async () => {
      const { balances } = await adapters();
      await injectFault(sandbox, { garbage: true });

      const { error, status } = await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read('00000000-0000-4000-8000-000000000000')));

      expect(error).toMatchObject({ code: 'UPSTREAM.BAD_RESPONSE', message: 'The provider answered with something that is not JSON' });
      expect(status).toBe(502);
    });

    it('when the provider refuses our credentials (401), then 502 for the partner with the provider error id kept', async () => {
      const { customers } = await adapters({}, (s) => ({ ...s, bearerToken: 'not-the-sandbox-token' }));

      const { error, status } = await failureOf(inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer())));

      expect(error).toMatchObject({ code: 'UPSTREAM.CREDENTIALS_REFUSED', outcome: 'rejected' });
      expect(error.upstream).toMatchObject({ status: 401, errorId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      expect(status).toBe(502);
      expect(JSON.stringify(problemOf(error))).not.toContain('not-the-sandbox-token');
      // An operator's problem, not the partner's: logged as an error with the provider's id, never the token.
      expect(logs.lines).toContainEqual(
        expect.objectContaining({
          level: 'error',
          context: 'Upstream',
          message: 'The provider refused the gateway credentials',
          fields: expect.objectContaining({ status: 401 }),
        }),
      );
      expect(JSON.stringify(logs.lines)).not.toContain('not-the-sandbox-token');
    });

    it('when the provider cannot be reached, then the POST fails as unreachable with nothing sent (outcome failed)', async () => {
      const port = await freePort();
      const { customers } = await adapters({}, (s) => ({ ...s, baseUrl: `http://127.0.0.1:${port}` }));

      const { error, status } = await failureOf(inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer())));

      expect(error).toMatchObject({ code: 'UPSTREAM.UNREACHABLE', outcome: 'failed' });
      expect(status).toBe(502);
    });

    it('when failures reach the threshold, then the circuit opens (503, nothing sent) and closes again after the pause', async () => {
      const { balances, customers, client, metrics } = await adapters({
        UPSTREAM_RETRY_MAX: '0',
        UPSTREAM_BREAKER_THRESHOLD: '2',
        UPSTREAM_BREAKER_HALF_OPEN_MS: '400',
      });
      const value = await inRequestScope(new RequestRecord('req-test'), () => customers.create(buildNewCustomer()));
      await clearSandbox(sandbox);
      await injectFault(sandbox, { status: 500, count: 2 });
      await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read(value.customerId)));
      await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read(value.customerId)));

      const open = await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read(value.customerId)));
      const stateWhileOpen = client.circuitState();
      const gaugeWhileOpen = await metrics.registry.getSingleMetricAsString('upstream_circuit_state');
      const sentWhileOpen = (await journal(sandbox)).length;
      await new Promise((r) => setTimeout(r, 450));
      const recovered = await inRequestScope(new RequestRecord('req-test'), () => balances.read(value.customerId));

      expect(open.error).toMatchObject({ code: 'UPSTREAM.CIRCUIT_OPEN', outcome: 'failed' });
      expect(open.status).toBe(503);
      expect(open.retryAfter).toBeGreaterThanOrEqual(1);
      expect(stateWhileOpen).toBe('open');
      expect(sentWhileOpen).toBe(2);
      expect(recovered.customerId).toBe(value.customerId);
      expect(client.circuitState()).toBe('closed');
      expect(gaugeWhileOpen).toMatch(/^upstream_circuit_state\{state="open"\} 1$/m);
      expect(gaugeWhileOpen).toMatch(/^upstream_circuit_state\{state="closed"\} 0$/m);
      const calls = await metrics.registry.getSingleMetricAsString('upstream_request_duration_seconds');
      expect(calls).toMatch(/^upstream_request_duration_seconds_count\{operation="balance.read",outcome="server_error"\} 2$/m);
      expect(calls).toMatch(/^upstream_request_duration_seconds_count\{operation="balance.read",outcome="circuit_open"\} 1$/m);
      expect(calls).toMatch(/^upstream_request_duration_seconds_count\{operation="balance.read",outcome="success"\} 1$/m);
    });

    it('when the provider rejects a request (4xx), then the circuit stays closed', async () => {
      const { balances, client } = await adapters({ UPSTREAM_BREAKER_THRESHOLD: '1' });

      await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read('00000000-0000-4000-8000-000000000000')));
      await failureOf(inRequestScope(new RequestRecord('req-test'), () => balances.read('00000000-0000-4000-8000-000000000000')));

      expect(client.circuitState()).toBe('closed');
    });
  });
});
