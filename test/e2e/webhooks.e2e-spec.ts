import { createPublicKey, type JsonWebKey, randomBytes, randomUUID, verify as ed25519Verify } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { startTestApp, TestApp } from '../support/app';
import { buildBankAccountRequest } from '../support/builders';
import { Answer, callApi, createCustomer } from '../support/http';
import { TEST_AUDIENCE } from '../support/oidc';
import { injectFault } from '../support/sandbox';
import { waitFor } from '../support/wait-for';
import { verifyWebhook, WebhookVerificationError } from '../../clients/typescript/src/webhooks';
import { runWebhooksCli } from '../../dev/cli/webhooks.command';

interface Delivery {
  readonly at: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly event: { id: string; type: string; resource: { id: string }; sequence: number; object: unknown; data: Record<string, unknown> };
}

interface Endpoint {
  id: string;
  url: string;
  enabled: boolean;
  disabled_reason: string | null;
  secret?: string;
  previous_secret_expires_at: string | null;
}

interface Attempt {
  event_id: string;
  attempt: number;
  http_status: number | null;
  failure: string | null;
  attempted_at: string;
  next_attempt_at: string | null;
  response: string | null;
}

/**
 * A partner's receiving server: records each delivery, and answers what its script says for the
 * path (a status, and headers), 200 once the script is spent.
 */
class Receiver {
  readonly deliveries = new Map<string, Delivery[]>();
  private readonly scripts = new Map<string, { status: number; headers?: Record<string, string>; body?: string }[]>();
  private server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((request: IncomingMessage, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = request.url ?? '/';
        const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
        this.deliveries.set(path, [...(this.deliveries.get(path) ?? []), { at: Date.now(), headers, body, event: JSON.parse(body) as Delivery['event'] }]);
        const next = this.scripts.get(path)?.shift() ?? { status: 200, body: 'ok' };
        response.writeHead(next.status, next.headers ?? {});
        response.end(next.body ?? '');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  answer(path: string, ...answers: { status: number; headers?: Record<string, string>; body?: string }[]): void {
    this.scripts.set(path, answers);
  }

  of(path: string): Delivery[] {
    return this.deliveries.get(path) ?? [];
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Events and webhooks (docs/events.md, docs/webhooks.md): events written with their facts, read
 * back; endpoints managed by the partner; deliveries to a real receiving server, signed as Standard
 * Webhooks sign them and checked by the `standardwebhooks` library, retried, disabled, redelivered,
 * ordered per resource when asked, and signed with both secrets through a rotation.
 */
describe('events and webhooks', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;
  let acme: string;
  let globex: string;
  /** A partner of the tenant whose end users the development OpenID provider signs in. */
  let initech: string;
  const receiver = new Receiver();

  const call = <T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, token = acme): Promise<Answer<T>> =>
    callApi<T>(t.baseUrl, method, path, { token, body });
  const addEndpoint = async (path: string, settings: Record<string, unknown> = {}): Promise<Endpoint> => {
    const made = await call<Endpoint>('POST', '/api/v1/webhook-endpoints', { url: receiver.url(path), ...settings });
    expect(made.status).toBe(201);
    return made.body.data!;
  };
  const openAccount = async (customerId: string): Promise<string> => {
    const opened = await call<{ id: string }>('POST', '/api/v1/bank-accounts', buildBankAccountRequest({ customer_id: customerId }));
    expect(opened.status).toBe(201);
    return opened.body.data!.id;
  };
  const attemptsOf = async (endpointId: string): Promise<Attempt[]> =>
    (await call<{ attempts: Attempt[] }>('GET', `/api/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`)).body.data!.attempts;
  const verifyV1a = async (delivery: Delivery): Promise<boolean> => {
    const jwks = (await (await fetch(`${t.baseUrl}/api/v1/webhooks/jwks`)).json()) as { keys: JsonWebKey[] };
    const key = createPublicKey({ key: jwks.keys[0], format: 'jwk' });
    const signature = delivery.headers['webhook-signature']
      .split(' ')
      .find((part) => part.startsWith('v1a,'))!
      .slice(4);
    const signed = `${delivery.headers['webhook-id']}.${delivery.headers['webhook-timestamp']}.${delivery.body}`;
    return ed25519Verify(null, Buffer.from(signed), key, Buffer.from(signature, 'base64'));
  };

  beforeAll(async () => {
    await receiver.start();
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE });
    t = await startTestApp({
      OIDC_ISSUER: idp.issuer,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
      // An opening the sandbox holds past this has an unknown outcome (504).
      UPSTREAM_TIMEOUT_MS: '1500',
    });
    acme = await t.createClient('partner', { tenant: 'acme' });
    globex = await t.createClient('partner', { tenant: 'globex' });
    initech = await t.createClient('partner', { tenant: 'default' });
  });

  afterAll(async () => {
    await t?.close();
    await idp?.close();
    await receiver.close();
  });

  it('when a customer is created and an account opened, then each is an event of the tenant, naming its request, reference and audit event; another tenant sees none', async () => {
    const customerId = await createCustomer(t.baseUrl, acme);
    const accountId = await openAccount(customerId);

    const listed = await call<{ events: Delivery['event'][]; next_cursor: string | null }>('GET', '/api/v1/events?type=bank_account.created,customer.created');
    expect(listed.status).toBe(200);
    const account = listed.body.data!.events.find((event) => event.resource.id === accountId)!;
    const customer = listed.body.data!.events.find((event) => event.resource.id === customerId)!;
    expect(account).toMatchObject({ type: 'bank_account.created', sequence: 1, data: { id: accountId, customer_id: customerId } });
    expect(customer).toMatchObject({ type: 'customer.created', sequence: 1 });
    const read = await call<{ audit_event_id: string; request_id: string; reference: string; object: { last4: string } }>(
      'GET',
      `/api/v1/events/${account.id}`,
    );
    expect(read.status).toBe(200);
    const [recorded] = await t.asOwner<{ operation: string; http_status: number; request_id: string; reference: string }>(
      'SELECT operation, http_status, request_id, reference FROM audit_events WHERE id = $1',
      [read.body.data!.audit_event_id],
    );
    expect(recorded).toEqual({
      operation: 'bank_account.create',
      http_status: 201,
      request_id: read.body.data!.request_id,
      reference: read.body.data!.reference,
    });
    expect(read.body.data!.object.last4).toMatch(/^[A-Za-z0-9]{4}$/);
    // The request log's timeline names the events its request caused.
    const timeline = await call<{ caused_events: { id: string; type: string }[] }>('GET', `/api/v1/requests/${read.body.data!.request_id}`);
    expect(timeline.body.data!.caused_events).toEqual([expect.objectContaining({ id: account.id, type: 'bank_account.created' })]);

    expect((await call('GET', `/api/v1/events/${account.id}`, undefined, globex)).body.error).toMatchObject({ code: 'EVENT.NOT_FOUND' });
    const theirs = await call<{ events: unknown[] }>('GET', '/api/v1/events', undefined, globex);
    expect(theirs.body.data!.events).toEqual([]);
    const wrongType = await call('GET', '/api/v1/events?type=bank_account.deleted');
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error!.id).toEqual(expect.any(String));
  });

  it('when an endpoint is made, then its secret is shown once, and it is read, changed and removed by its tenant only', async () => {
    const made = await addEndpoint('/crud', { description: 'Ledger', event_types: ['customer.created'] });
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const read = await call<Endpoint>('GET', `/api/v1/webhook-endpoints/${made.id}`);
    expect(read.body.data).toMatchObject({ id: made.id, url: receiver.url('/crud'), enabled: true, event_types: ['customer.created'] });
    expect(read.body.data).not.toHaveProperty('secret');
    expect((await call('GET', `/api/v1/webhook-endpoints/${made.id}`, undefined, globex)).status).toBe(404);
    const changed = await call<Endpoint>('PATCH', `/api/v1/webhook-endpoints/${made.id}`, { enabled: false, description: 'Ledger (paused)' });
    expect(changed.body.data).toMatchObject({ enabled: false, description: 'Ledger (paused)', event_types: ['customer.created'] });
    const list = await call<{ endpoints: Endpoint[] }>('GET', '/api/v1/webhook-endpoints');
    expect(list.body.data!.endpoints.map((endpoint) => endpoint.id)).toContain(made.id);
    expect((await call('DELETE', `/api/v1/webhook-endpoints/${made.id}`, undefined, globex)).status).toBe(404);
    expect((await call('DELETE', `/api/v1/webhook-endpoints/${made.id}`)).status).toBe(200);
    expect((await call('GET', `/api/v1/webhook-endpoints/${made.id}`)).status).toBe(404);
    const refused = await call('POST', '/api/v1/webhook-endpoints', { url: 'ftp://partner.example/hook' });
    expect(refused.body.error).toMatchObject({ code: 'WEBHOOK_ENDPOINT.URL_REFUSED' });
    await call('DELETE', `/api/v1/webhook-endpoints/${made.id}`);
  });

  it('when an account is opened, then the endpoint receives it signed (v1 by its secret, v1a by the published key), failing then recovering, with one webhook-id', async () => {
    const endpoint = await addEndpoint('/signed', { event_types: ['bank_account.created'] });
    receiver.answer('/signed', { status: 500, body: 'busy' });
    const accountId = await openAccount(await createCustomer(t.baseUrl, acme));

    const [failed, delivered] = await waitFor(() => (receiver.of('/signed').length >= 2 ? receiver.of('/signed') : undefined), {
      timeoutMs: 15_000,
      what: 'a retried delivery',
    });
    expect(delivered.event).toMatchObject({ type: 'bank_account.created', resource: { id: accountId }, object: null });
    // The library a partner verifies with accepts it: secret, id, timestamp, body.
    expect(new Webhook(endpoint.secret!).verify(delivered.body, delivered.headers)).toMatchObject({ id: delivered.event.id });
    expect(() => new Webhook(`whsec_${randomBytes(24).toString('base64')}`).verify(delivered.body, delivered.headers)).toThrow();
    expect(await verifyV1a(delivered)).toBe(true);
    // The typed client verifies it in one call, either way, and types the event it returns.
    const keys = (await (await fetch(`${t.baseUrl}/api/v1/webhooks/jwks`)).json()) as { keys: JsonWebKey[] };
    const bySecret = await verifyWebhook(delivered.body, delivered.headers, { secret: endpoint.secret! });
    const byKeys = await verifyWebhook(delivered.body, delivered.headers, { keys: keys, endpointId: endpoint.id });
    // The keys are the gateway's, every tenant's: a delivery sent on to another endpoint names the one it was for.
    await expect(verifyWebhook(delivered.body, delivered.headers, { keys: keys, endpointId: randomUUID() })).rejects.toThrow('another endpoint');
    expect(bySecret.type === 'bank_account.created' && bySecret.data.customer_id).toEqual(expect.any(String));
    expect(byKeys.id).toBe(delivered.event.id);
    const tampered = delivered.body.replace(
      accountId,
      accountId.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
    );
    await expect(verifyWebhook(tampered, delivered.headers, { secret: endpoint.secret! })).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(tampered, delivered.headers, { keys: keys, endpointId: endpoint.id })).rejects.toBeInstanceOf(WebhookVerificationError);
    expect(delivered.headers['webhook-id']).toBe(failed.headers['webhook-id']);
    expect(delivered.headers['webhook-id']).toBe(delivered.event.id);
    // The Standard Webhooks schedule's second attempt: 5 s after the first, ±10 %.
    expect(delivered.at - failed.at).toBeGreaterThanOrEqual(4_400);

    const attempts = await waitFor(async () => ((await attemptsOf(endpoint.id)).length >= 2 ? attemptsOf(endpoint.id) : undefined), {
      what: 'two attempts logged',
    });
    expect(attempts.map((attempt) => [attempt.attempt, attempt.http_status, attempt.failure])).toEqual([
      [2, 200, null],
      [1, 500, 'http_status'],
    ]);
    expect(attempts[1].response).toBe('busy');
    const ofEvent = await call<{ attempts: Attempt[] }>('GET', `/api/v1/events/${delivered.event.id}/deliveries`);
    expect(ofEvent.body.data!.attempts).toHaveLength(2);
    await call('DELETE', `/api/v1/webhook-endpoints/${endpoint.id}`);
  });

  it('when the endpoint answers 429 with Retry-After, then the next attempt is due when it says; when it answers 410, then it is disabled and an event says so', async () => {
    const watcher = await addEndpoint('/watcher', { event_types: ['webhook_endpoint.disabled'] });
    const endpoint = await addEndpoint('/gone', { event_types: ['bank_account.created'] });
    receiver.answer('/gone', { status: 429, headers: { 'retry-after': '1' } }, { status: 410 });
    await openAccount(await createCustomer(t.baseUrl, acme));

    const attempts = await waitFor(async () => ((await attemptsOf(endpoint.id)).length >= 2 ? attemptsOf(endpoint.id) : undefined), {
      timeoutMs: 10_000,
      what: 'the attempts',
    });
    const [gone, limited] = attempts;
    expect(Date.parse(limited.next_attempt_at!) - Date.parse(limited.attempted_at)).toBe(1000);
    expect([limited.http_status, gone.http_status, gone.next_attempt_at]).toEqual([429, 410, null]);
    const disabled = await call<Endpoint>('GET', `/api/v1/webhook-endpoints/${endpoint.id}`);
    expect(disabled.body.data).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    const said = await waitFor(() => receiver.of('/watcher')[0], { timeoutMs: 10_000, what: 'webhook_endpoint.disabled delivered' });
    expect(said.event).toMatchObject({ type: 'webhook_endpoint.disabled', resource: { id: endpoint.id }, data: { reason: 'gone' } });

    // Enabled again, then one event delivered again on request: the same webhook-id.
    await call('PATCH', `/api/v1/webhook-endpoints/${endpoint.id}`, { enabled: true });
    const redelivery = await call<{ redelivered: number }>('POST', `/api/v1/webhook-endpoints/${endpoint.id}/redeliveries`, { event_id: attempts[0].event_id });
    expect(redelivery.status).toBe(202);
    expect(redelivery.body.data).toEqual({ redelivered: 1 });
    const again = await waitFor(() => receiver.of('/gone')[2], { timeoutMs: 10_000, what: 'the redelivery' });
    expect(again.headers['webhook-id']).toBe(attempts[0].event_id);
    const unknown = await call('POST', `/api/v1/webhook-endpoints/${endpoint.id}/redeliveries`, { event_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.body.error).toMatchObject({ code: 'WEBHOOK_ENDPOINT.DELIVERY_NOT_FOUND' });
    await call('DELETE', `/api/v1/webhook-endpoints/${endpoint.id}`);
    await call('DELETE', `/api/v1/webhook-endpoints/${watcher.id}`);
  });

  it('when an endpoint asks for order, then a resource’s next event waits for the one before to be delivered', async () => {
    const made = await call<Endpoint>(
      'POST',
      '/api/v1/webhook-endpoints',
      { url: receiver.url('/ordered'), ordered: true, event_types: ['customer.created', 'customer.assigned'] },
      initech,
    );
    receiver.answer('/ordered', { status: 503, headers: { 'retry-after': '2' } });
    const customerId = await createCustomer(t.baseUrl, initech);
    const bound = await call('POST', `/api/v1/customers/${customerId}/end-user`, { subject: `user-${randomBytes(4).toString('hex')}` }, initech);
    expect(bound.status).toBe(200);

    const received = await waitFor(() => (receiver.of('/ordered').length >= 3 ? receiver.of('/ordered') : undefined), {
      timeoutMs: 15_000,
      what: 'three deliveries',
    });
    expect(received.map((delivery) => [delivery.event.type, delivery.event.sequence])).toEqual([
      ['customer.created', 1],
      ['customer.created', 1],
      ['customer.assigned', 2],
    ]);
    await call('DELETE', `/api/v1/webhook-endpoints/${made.body.data!.id}`, undefined, initech);
  });

  it('when an opening gets no answer from the provider, then its unknown outcome is an event, naming the audit event that records it', async () => {
    const endpoint = await addEndpoint('/unknown', { event_types: ['request.outcome_unknown'] });
    const customerId = await createCustomer(t.baseUrl, acme);
    await injectFault(t.sandbox, { path: 'account', latency_ms: 2500, drop: true, count: 1 });
    const body = buildBankAccountRequest({ customer_id: customerId });
    const timedOut = await call('POST', '/api/v1/bank-accounts', body);
    expect(timedOut.status).toBe(504);

    const told = await waitFor(() => receiver.of('/unknown')[0], { timeoutMs: 10_000, what: 'request.outcome_unknown delivered' });
    expect(told.event).toMatchObject({
      type: 'request.outcome_unknown',
      resource: { type: 'request', id: body.reference },
      data: { operation: 'bank_account.create', reference: body.reference, customer_id: customerId, error_id: timedOut.body.error!.id },
    });
    const [recorded] = await t.asOwner<{ phase: string }>('SELECT phase FROM audit_events WHERE id = $1', [
      (told.event as unknown as { audit_event_id: string }).audit_event_id,
    ]);
    expect(recorded).toEqual({ phase: 'unknown' });
    await call('DELETE', `/api/v1/webhook-endpoints/${endpoint.id}`);
  });

  it('when the service runs as production does, then endpoints that are not https, or point to a private, loopback or link-local address, are refused', async () => {
    const strict = await startTestApp({ WEBHOOK_LOCAL_URLS: 'false' });
    try {
      const partner = await strict.createClient('partner');
      for (const url of [
        'http://partner.example/hook',
        'https://127.0.0.1/hook',
        'https://169.254.169.254/latest',
        'https://[::1]/hook',
        'https://10.0.0.8/hook',
        'https://localhost/hook',
      ]) {
        const refused = await callApi(strict.baseUrl, 'POST', '/api/v1/webhook-endpoints', { token: partner, body: { url } });
        expect([url, refused.status, refused.body.error?.code]).toEqual([url, 400, 'WEBHOOK_ENDPOINT.URL_REFUSED']);
        expect(refused.body.error!.id).toEqual(expect.any(String));
      }
      const allowed = await callApi(strict.baseUrl, 'POST', '/api/v1/webhook-endpoints', { token: partner, body: { url: 'https://partner.example/hook' } });
      expect(allowed.status).toBe(201);
    } finally {
      await strict.close();
    }
  });

  it('when `npm run webhooks -- listen` runs, then it forwards the tenant’s new events to a local server, signed with the secret it printed', async () => {
    const out: string[] = [];
    const stop = new AbortController();
    const listening = runWebhooksCli(
      ['listen', '--forward-to', receiver.url('/cli'), '--gateway', t.baseUrl, '--types', 'customer.created'],
      { PARTNER_TOKEN: acme },
      { out: (line) => out.push(line), err: (line) => out.push(line) },
      stop.signal,
    );
    try {
      const secret = await waitFor(() => /(whsec_\S+)$/.exec(out[0] ?? '')?.[1], { what: 'the secret printed' });
      const customerId = await createCustomer(t.baseUrl, acme);
      const forwarded = await waitFor(() => receiver.of('/cli')[0], { timeoutMs: 10_000, what: 'the event forwarded' });
      const event = await verifyWebhook(forwarded.body, forwarded.headers, { secret });
      expect(event).toMatchObject({ type: 'customer.created', resource: { id: customerId } });
      expect(receiver.of('/cli')).toHaveLength(1);
    } finally {
      stop.abort();
      expect(await listening).toBe(0);
    }
    const wrong: string[] = [];
    const code = await runWebhooksCli(['listen', '--forward-to', 'ftp://x'], { PARTNER_TOKEN: acme }, { out: (l) => wrong.push(l), err: (l) => wrong.push(l) });
    expect([code, wrong[0]]).toEqual([2, expect.stringContaining('--forward-to must be an http(s) URL')]);
  });

  it('when a secret is rotated, then both sign through the overlap, and a revoked one no longer does', async () => {
    const endpoint = await addEndpoint('/rotated', { event_types: ['customer.created'] });
    const rotated = await call<Endpoint>('POST', `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body.data!.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.data!.previous_secret_expires_at!) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    await createCustomer(t.baseUrl, acme);
    const during = await waitFor(() => receiver.of('/rotated')[0], { timeoutMs: 10_000, what: 'a delivery' });
    expect(during.headers['webhook-signature'].split(' ').filter((part) => part.startsWith('v1,'))).toHaveLength(2);
    for (const secret of [endpoint.secret!, rotated.body.data!.secret!]) expect(() => new Webhook(secret).verify(during.body, during.headers)).not.toThrow();

    const revoked = await call<Endpoint>('POST', `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { overlap_hours: 0 });
    expect(revoked.body.data!.previous_secret_expires_at).toBeNull();
    await createCustomer(t.baseUrl, acme);
    const after = await waitFor(() => receiver.of('/rotated')[1], { timeoutMs: 10_000, what: 'a second delivery' });
    expect(() => new Webhook(revoked.body.data!.secret!).verify(after.body, after.headers)).not.toThrow();
    expect(() => new Webhook(rotated.body.data!.secret!).verify(after.body, after.headers)).toThrow();
    await call('DELETE', `/api/v1/webhook-endpoints/${endpoint.id}`);
  });
});
