import { randomBytes, randomUUID } from 'node:crypto';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { devLogin } from '../../dev/identity-provider/dev-login';
import { startTestApp, TestApp } from '../support/app';
import { buildBankAccountRequest, buildCustomerRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { dpopProof, DpopKey, newDpopKey, TEST_AUDIENCE, TestIssuer } from '../support/oidc';
import { clearSandbox, journal } from '../support/sandbox';

/**
 * End users (docs/security.md, "End users"): tokens from the development OpenID provider, over
 * real HTTP (discovery, JWKS, the token endpoint), and hand-made hostile ones from a second,
 * trusted issuer. Two replicas share one database, as DPoP's replay rule needs.
 */
describe('end users of the partner’s OpenID provider', () => {
  let idp: DevIdentityProvider;
  let forger: TestIssuer;
  let t: TestApp;
  let replica: TestApp;
  let partner: string;
  let admin: string;

  const login = (user: string, options: { scopes?: string[]; dpop?: DpopKey } = {}) =>
    devLogin({
      issuer: idp.issuer,
      user,
      audience: TEST_AUDIENCE,
      scopes: options.scopes,
      dpop: options.dpop ? (method, url) => dpopProof(options.dpop!, { method, url }) : undefined,
    }).then((tokens) => tokens.access_token);

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE });
    forger = await TestIssuer.start();
    const env = {
      OIDC_ISSUER: idp.issuer,
      OIDC_AUDIENCE: TEST_AUDIENCE,
      OIDC_ISSUERS: JSON.stringify([{ issuer: forger.issuer, audience: TEST_AUDIENCE, tenant: 'globex' }]),
      END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
    };
    t = await startTestApp(env);
    replica = await startTestApp(env, { database: t.database });
    partner = await t.createClient('partner');
    admin = await t.createClient('admin');
  });

  afterAll(async () => {
    await replica?.app.close();
    await replica?.sandbox.close();
    await t?.close();
    await forger?.close();
    await idp?.close();
  });

  beforeEach(() => clearSandbox(t.sandbox));

  it('when demo logs in at the OpenID provider, then they create a customer, find it in /me, read its balance and open an account for it', async () => {
    const token = await login('demo');

    const customerId = await createCustomer(t.baseUrl, token);
    const me = await callApi<{ id: string; role: string; tenant: string; scopes: string[]; customer_ids: string[] }>(t.baseUrl, 'GET', '/api/v1/me', { token });
    const balance = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token });
    const account = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token, body: buildBankAccountRequest({ customer_id: customerId }) });

    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({
      role: 'end_user',
      tenant: 'default',
      scopes: ['customers:write', 'customers:read', 'balances:read', 'bank_accounts:write', 'bank_accounts:read'],
    });
    expect(me.body.data!.customer_ids).toContain(customerId);
    expect(balance.status).toBe(200);
    expect(account.status).toBe(201);
  });

  it('when the development provider is sent an oddly spelt path, then it refuses it rather than route it two ways', async () => {
    const spelt = await fetch(`${idp.issuer}/%69nteraction/x`);
    const dotted = await fetch(`${idp.issuer}/x/..%2Finteraction/x`);
    const plain = await fetch(`${idp.issuer}/.well-known/openid-configuration`);

    expect([spelt.status, dotted.status, plain.status]).toEqual([400, 400, 200]);
  });

  it('when alex asks for demo’s customer, then it is 404 for a balance and for an account, and nothing reaches the provider', async () => {
    const demoCustomer = await createCustomer(t.baseUrl, await login('demo'));
    const alex = await login('alex');
    await clearSandbox(t.sandbox);

    const balance = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${demoCustomer}/balance`, { token: alex });
    const account = await callApi(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: alex, body: buildBankAccountRequest({ customer_id: demoCustomer }) });
    const me = await callApi<{ customer_ids: string[] }>(t.baseUrl, 'GET', '/api/v1/me', { token: alex });

    expect([balance.status, balance.body.error?.code]).toEqual([404, 'CUSTOMER.NOT_FOUND']);
    expect([account.status, account.body.error?.code]).toEqual([404, 'CUSTOMER.NOT_FOUND']);
    expect(me.body.data!.customer_ids).not.toContain(demoCustomer);
    expect(await journal(t.sandbox)).toEqual([]);
  });

  it('when an end user reads a customer of their tenant made by a partner server, then it is 404 until the partner binds it to them', async () => {
    const customerId = await createCustomer(t.baseUrl, partner);
    const alex = await login('alex');

    const before = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token: alex });
    // Bound on the other replica: this one remembered the customer as nobody's, and still sees the binding.
    const bound = await callApi(replica.baseUrl, 'POST', `/api/v1/customers/${customerId}/end-user`, {
      token: partner,
      body: { subject: 'alex', issuer: idp.issuer },
    });
    const after = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${customerId}/balance`, { token: alex });
    const toDemo = await callApi(t.baseUrl, 'POST', `/api/v1/customers/${customerId}/end-user`, {
      token: partner,
      body: { subject: 'demo', issuer: idp.issuer },
    });
    const me = await callApi<{ id: string }>(t.baseUrl, 'GET', '/api/v1/me', { token: alex });

    expect(before.status).toBe(404);
    expect(bound.status).toBe(200);
    expect(bound.body.data).toEqual({ customer_id: customerId, end_user_id: me.body.data!.id, binding: 'bound' });
    expect(after.status).toBe(200);
    expect([toDemo.status, toDemo.body.error?.code]).toEqual([409, 'CUSTOMER.ALREADY_BOUND']);
  });

  it('when an end user tries to bind a customer, or to call an admin endpoint, then it is 403', async () => {
    const token = await login('demo');
    const customerId = await createCustomer(t.baseUrl, token);

    const bind = await callApi(t.baseUrl, 'POST', `/api/v1/customers/${customerId}/end-user`, { token, body: { subject: 'alex' } });
    const clients = await callApi(t.baseUrl, 'GET', '/api/v1/clients', { token });

    expect([bind.status, bind.body.error?.code]).toEqual([403, 'AUTH.FORBIDDEN']);
    expect([clients.status, clients.body.error?.code]).toEqual([403, 'AUTH.FORBIDDEN']);
  });

  it('when a partner binds to an issuer the service does not trust, then 400 names the field', async () => {
    const customerId = await createCustomer(t.baseUrl, partner);
    const answer = await callApi(t.baseUrl, 'POST', `/api/v1/customers/${customerId}/end-user`, {
      token: partner,
      body: { subject: 'alex', issuer: 'https://login.elsewhere.example' },
    });

    expect(answer.status).toBe(400);
    expect(answer.body.error?.fields?.map((field) => field.field)).toEqual(['issuer']);
  });

  it('when the token lacks the operation’s scope, then 403 AUTH.INSUFFICIENT_SCOPE with the RFC 6750 challenge naming it, and nothing is sent', async () => {
    const token = await login('demo', { scopes: ['balances:read'] });

    const answer = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token, body: buildCustomerRequest() });

    expect([answer.status, answer.body.error?.code]).toEqual([403, 'AUTH.INSUFFICIENT_SCOPE']);
    expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="partner-gateway", error="insufficient_scope", scope="customers:write"');
    expect(await journal(t.sandbox)).toEqual([]);
  });

  it.each([
    ['expired', () => forger.token({}, { now: Math.floor(Date.now() / 1000) - 3600 })],
    ['for another audience', () => forger.token({ aud: 'urn:another-api' })],
    [
      'unsigned (alg none)',
      async () =>
        `${Buffer.from('{"alg":"none","typ":"at+jwt"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: forger.issuer, aud: TEST_AUDIENCE, sub: 'x', iat: 1, exp: 9e9 })).toString('base64url')}.`,
    ],
    ['from an issuer not trusted', () => forger.token({ iss: 'http://127.0.0.1:9/not-trusted' })],
    [
      'signed by the issuer and then altered',
      async () => {
        const [header, , signature] = (await forger.token()).split('.');
        return `${header}.${Buffer.from(JSON.stringify({ iss: forger.issuer, aud: TEST_AUDIENCE, sub: 'admin', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url')}.${signature}`;
      },
    ],
  ])('when the token is %s, then 401 with the provider’s envelope and error="invalid_token", audited, nothing sent', async (_, make) => {
    const token = await make();
    const answer = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${randomUUID()}/balance`, { token });

    expect(answer.status).toBe(401);
    expect(answer.body.error).toEqual({
      id: expect.any(String),
      code: 'AUTH.INVALID_TOKEN',
      details: 'The token is invalid or expired',
      message: 'The supplied token is invalid or expired',
      doc_url: `${t.baseUrl}/reference/errors#auth-invalid-token`,
    });
    expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="partner-gateway", error="invalid_token"');
    const [event] = await t.asOwner<{ operation: string; caller_kind: string | null }>('SELECT operation, caller_kind FROM audit_events WHERE error_id = $1', [
      answer.body.error!.id,
    ]);
    expect(event).toEqual({ operation: 'auth.rejected', caller_kind: null });
    expect(await journal(t.sandbox)).toEqual([]);
  });

  it('when a second trusted issuer’s end user calls, then they act in that issuer’s tenant only', async () => {
    const token = await forger.token({ sub: 'globex-user' });
    const defaultsCustomer = await createCustomer(t.baseUrl, partner);

    const me = await callApi<{ tenant: string }>(t.baseUrl, 'GET', '/api/v1/me', { token });
    const other = await callApi(t.baseUrl, 'GET', `/api/v1/customers/${defaultsCustomer}/balance`, { token });

    expect(me.body.data!.tenant).toBe('globex');
    expect(other.status).toBe(404);
  });

  describe('DPoP-bound tokens (RFC 9449)', () => {
    let key: DpopKey;
    let token: string;
    let customerId: string;
    const path = () => `/api/v1/customers/${customerId}/balance`;
    const withProof = async (app: TestApp, proof: string, overrides: { scheme?: string } = {}) =>
      callApi(app.baseUrl, 'GET', path(), { headers: { authorization: `${overrides.scheme ?? 'DPoP'} ${token}`, dpop: proof } });

    beforeAll(async () => {
      key = await newDpopKey();
      token = await login('demo', { dpop: key });
      const proof = await dpopProof(key, { method: 'POST', url: `${t.baseUrl}/api/v1/customers`, accessToken: token });
      const created = await callApi(t.baseUrl, 'POST', '/api/v1/customers', {
        headers: { authorization: `DPoP ${token}`, dpop: proof },
        body: buildCustomerRequest(),
      });
      customerId = created.body.data!.customer_id as string;
    });

    it('when the provider binds the token to the app’s key, then a request with a fresh proof is served', async () => {
      const answer = await withProof(t, await dpopProof(key, { method: 'GET', url: `${t.baseUrl}${path()}`, accessToken: token }));
      expect(answer.status).toBe(200);
    });

    it('when a proof is replayed, on the same replica or another, then 401 invalid_dpop_proof and nothing is sent', async () => {
      const proof = await dpopProof(key, { method: 'GET', url: `${t.baseUrl}${path()}`, accessToken: token });
      expect((await withProof(t, proof)).status).toBe(200);
      await clearSandbox(t.sandbox);
      await clearSandbox(replica.sandbox);

      const again = await withProof(t, proof);
      const elsewhere = await withProof(replica, proof.replace(t.baseUrl, replica.baseUrl));
      const sameProofOnReplica = await callApi(replica.baseUrl, 'GET', path(), { headers: { authorization: `DPoP ${token}`, dpop: proof } });

      expect([again.status, again.body.error?.code]).toEqual([401, 'AUTH.INVALID_DPOP_PROOF']);
      expect(again.headers.get('www-authenticate')).toMatch(/^DPoP realm="partner-gateway", error="invalid_dpop_proof", algs="ES256/);
      expect(elsewhere.status).toBe(401);
      expect(sameProofOnReplica.status).toBe(401);
      expect(await journal(t.sandbox)).toEqual([]);
      expect(await journal(replica.sandbox)).toEqual([]);
    });

    it('when the proof is for another URL or method, or the bound token is sent as a bearer token, then 401', async () => {
      const otherUrl = await withProof(t, await dpopProof(key, { method: 'GET', url: `${t.baseUrl}/api/v1/me`, accessToken: token }));
      const otherMethod = await withProof(t, await dpopProof(key, { method: 'POST', url: `${t.baseUrl}${path()}`, accessToken: token }));
      const asBearer = await callApi(t.baseUrl, 'GET', path(), { token });
      const stolenWithoutKey = await withProof(t, await dpopProof(await newDpopKey(), { method: 'GET', url: `${t.baseUrl}${path()}`, accessToken: token }));

      expect([otherUrl.status, otherUrl.body.error?.code]).toEqual([401, 'AUTH.INVALID_DPOP_PROOF']);
      expect([otherMethod.status, otherMethod.body.error?.code]).toEqual([401, 'AUTH.INVALID_DPOP_PROOF']);
      expect(asBearer.status).toBe(401);
      expect([stolenWithoutKey.status, stolenWithoutKey.body.error?.code]).toEqual([401, 'AUTH.INVALID_DPOP_PROOF']);
    });
  });

  describe('the audit log knows the principal without storing the person', () => {
    it('when an end user calls, then their events say end_user with their pseudonym; the subject, token and claims are nowhere in the table or the logs; support finds them by subject', async () => {
      const logs = t.logs;
      const token = await login('alex');
      const me = await callApi<{ id: string }>(t.baseUrl, 'GET', '/api/v1/me', { token });
      await createCustomer(t.baseUrl, token);

      const rows = await t.asOwner<{ row: string }>(`SELECT row_to_json(e)::text AS row FROM audit_events e WHERE client_id = $1`, [me.body.data!.id]);
      const found = await callApi<{ events: { caller_kind: string; client_id: string; operation: string }[] }>(
        t.baseUrl,
        'GET',
        `/api/v1/audit-events?end_user=alex&end_user_issuer=${encodeURIComponent(idp.issuer)}&limit=100&reason=SUP-7`,
        {
          token: admin,
        },
      );
      const everything = (await t.asOwner<{ row: string }>(`SELECT row_to_json(e)::text AS row FROM audit_events e`)).map((r) => r.row).join('\n');

      expect(rows.length).toBeGreaterThanOrEqual(3);
      expect(rows.every(({ row }) => JSON.parse(row).caller_kind === 'end_user')).toBe(true);
      expect(found.body.data!.events.map((event) => event.client_id)).toEqual(rows.map(() => me.body.data!.id));
      expect(found.body.data!.events.map((event) => event.operation)).toEqual(expect.arrayContaining(['client.read', 'customer.create']));
      for (const secret of ['"alex"', token, token.split('.')[1], 'Alex Example', 'alex@example.com']) {
        expect(everything).not.toContain(secret);
        expect(logs.text).not.toContain(secret);
      }
    });

    it('when support names a subject without an issuer while two are trusted, then 400 says which issuers there are', async () => {
      const answer = await callApi(t.baseUrl, 'GET', '/api/v1/audit-events?end_user=alex&end_user_issuer=https://nowhere.example&reason=SUP-7', {
        token: admin,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.error?.fields?.[0].field).toBe('end_user_issuer');
    });
  });

  it('when one end user reuses another’s reference, then 422 REFERENCE_TAKEN and never the other’s stored answer', async () => {
    const reference = randomUUID();
    const demo = await login('demo');
    const alex = await login('alex');
    const body = buildCustomerRequest({ reference });

    const first = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: demo, body });
    const second = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: alex, body });

    expect(first.status).toBe(201);
    expect([second.status, second.body.error?.code]).toEqual([422, 'IDEMPOTENCY.REFERENCE_TAKEN']);
    expect(JSON.stringify(second.body)).not.toContain(first.body.data!.customer_id as string);
  });
});
