import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../support/app';
import { launchChromium } from '../support/browser';
import { callApi, createCustomer } from '../support/http';
import { asTrustedProvider, asTrustedStaffProvider, DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';

const OUTPUT = join(process.cwd(), 'test-output');

/** Try it out on a GET operation, as a user clicks it (`fill` sets its parameters); the status and body shown, and a screenshot. */
async function tryItOut(page: Page, path: string, screenshot: string, fill?: (operation: Locator) => Promise<unknown>) {
  const operation = page.locator('.opblock-get', { has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });
  await operation.locator('.opblock-summary').click();
  await operation.locator('button.try-out__btn').click();
  await fill?.(operation);
  await operation.locator('button.execute').click();
  const status = operation.locator('.live-responses-table .response .response-col_status');
  await status.waitFor();
  const shownStatus = (await status.innerText()).trim();
  const body = await operation.locator('.live-responses-table .response-col_description pre').first().innerText();
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, screenshot), fullPage: true });
  return { shownStatus, body };
}

describe('Swagger UI in a real browser (live mode: the page itself needs the admin token)', () => {
  let sut: TestApp;
  let browser: Browser;
  let admin: string;

  beforeAll(async () => {
    sut = await startTestApp();
    admin = await sut.createClient('admin');
    await createCustomer(sut.baseUrl, await sut.createClient('partner'));
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await sut?.close();
  });

  it('when an admin opens /docs, authorises with the token and runs an audit-events query with Try it out, then it answers 200 with events', async () => {
    // The browser's own login prompt (Basic: any user name, the admin token as password).
    const context = await browser.newContext({ httpCredentials: { username: 'admin', password: admin }, viewport: { width: 1280, height: 1600 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));

    await page.goto(`${sut.baseUrl}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();

    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux input').first().fill(admin);
    await page.locator('.modal-ux button.authorize').click();
    await page.locator('.modal-ux button.close-modal').click();

    const { shownStatus, body } = await tryItOut(page, '/api/v1/audit-events', 'swagger-ui-try-it-out.png', (operation) =>
      operation.locator('tr[data-param-name="operation"] select').selectOption('customer.create'),
    );
    await context.close();

    expect(shownStatus).toBe('200');
    const envelope = JSON.parse(body) as { status: number; data: { events: { operation: string }[] } };
    expect(envelope.status).toBe(200);
    expect(envelope.data.events.length).toBeGreaterThan(0);
    expect(envelope.data.events.every((event) => event.operation === 'customer.create')).toBe(true);
    expect(problems).toEqual([]);
  });
});

/** The service in sandbox mode's way: the development OpenID provider at `issuer` trusted, Swagger UI's login through it. */
const trustingTheProvider = (issuer: string) =>
  startTestApp({ END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64') }, { development: { identityProvider: asTrustedProvider(issuer) } });

describe('Swagger UI’s end-user login in a real browser (the development OpenID provider, authorization code + PKCE)', () => {
  let idp: DevIdentityProvider;
  let sut: TestApp;
  let browser: Browser;
  let admin: string;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
    sut = await trustingTheProvider(idp.issuer);
    admin = await sut.createClient('admin');
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await sut?.close();
    await idp?.close();
  });

  it('when Authorize logs demo in at the provider’s form, then Try it out on /api/v1/me answers as that end user', async () => {
    const context = await browser.newContext({ httpCredentials: { username: 'admin', password: admin }, viewport: { width: 1280, height: 1600 } });
    const page = await context.newPage();
    await page.goto(`${sut.baseUrl}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();

    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux .auth-container h4').nth(1).waitFor();
    // What a Swagger user can use, in the order they need it: the client token, then the end user's login; one form each.
    const schemes = (await page.locator('.modal-ux .auth-container h4').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
    const dialog = await page.locator('.modal-ux').innerText();
    // The code flow (with PKCE) is the one a browser app uses, and the only one offered.
    const endUser = page.locator(
      'xpath=//h4[contains(., "end-user") and contains(., "authorization_code")]/ancestor::div[.//button[contains(@class, "authorize")]][1]',
    );
    const clientId = endUser.locator('input[data-name="clientId"]');
    await clientId.waitFor();
    expect(await clientId.inputValue()).toBe('swagger-ui');
    const popup = page.waitForEvent('popup');
    await endUser.locator('button.authorize').click();
    const login = await popup;
    await login.locator('input[name="login"]').fill('demo');
    await login.locator('input[name="password"]').fill('demo');
    await Promise.all([login.waitForEvent('close'), login.locator('button[type="submit"]').click()]);
    // Authorised: the flow's form now offers to log out.
    await page.locator('.modal-ux button', { hasText: 'Logout' }).first().waitFor();
    await page.locator('.modal-ux button.close-modal').click();

    const { shownStatus, body } = await tryItOut(page, '/api/v1/me', 'swagger-ui-end-user.png');
    await context.close();

    expect(schemes).toEqual(['bearer (http, Bearer)', 'end-user (OAuth2, authorization_code with PKCE)']);
    expect(dialog).toContain('DEVELOPMENT CLIENT TOKENS');
    expect(dialog).not.toMatch(/cookie|refresh_token/i);
    expect(shownStatus).toBe('200');
    expect(JSON.parse(body)).toMatchObject({ status: 200, data: { role: 'end_user', scopes: expect.arrayContaining(['balances:read']) } });
  });
});

describe('the provider’s discovery document as Swagger UI reads it (/docs-openid-configuration)', () => {
  let idp: DevIdentityProvider;
  let sut: TestApp;
  let admin: string;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
    sut = await trustingTheProvider(idp.issuer);
    admin = await sut.createClient('admin');
  });

  afterAll(async () => {
    await sut?.close();
    await idp?.close();
  });

  const read = () =>
    fetch(`${sut.baseUrl}/docs-openid-configuration`, { headers: { authorization: `Basic ${Buffer.from(`admin:${admin}`).toString('base64')}` } });

  it('when read, then it is the provider’s, offering the authorization code flow only; the served document points there and has no cookie scheme', async () => {
    const answer = await read();
    const document = (await answer.json()) as Record<string, unknown>;
    const served = await callApi<never>(sut.baseUrl, 'GET', '/docs-json', { token: admin });
    const schemes = (served.body as unknown as { components: { securitySchemes: Record<string, { openIdConnectUrl?: string }> } }).components.securitySchemes;
    const anonymous = await fetch(`${sut.baseUrl}/docs-openid-configuration`);

    expect(answer.status).toBe(200);
    expect(document).toMatchObject({ issuer: idp.issuer, authorization_endpoint: `${idp.issuer}/auth`, grant_types_supported: ['authorization_code'] });
    expect(Object.keys(schemes)).toEqual(['bearer', 'end-user']);
    expect(schemes['end-user'].openIdConnectUrl).toBe('/docs-openid-configuration');
    expect(anonymous.status).toBe(401);
  });

  it('when the provider was down since the start (never read), then it answers 503 in the envelope with an error id, never a 500; once read, a provider down serves the last read', async () => {
    const gone = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
    await gone.close();
    const other = await trustingTheProvider(gone.issuer);
    try {
      const otherAdmin = await other.createClient('admin');
      const answer = await fetch(`${other.baseUrl}/docs-openid-configuration`, {
        headers: { authorization: `Basic ${Buffer.from(`admin:${otherAdmin}`).toString('base64')}` },
      });
      const body = (await answer.json()) as { error?: { code?: string; id?: string } };
      await idp.close();
      const lastRead = await read();

      expect(answer.status).toBe(503);
      expect(body.error).toMatchObject({ code: 'AUTH.ISSUER_UNAVAILABLE', id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      expect(lastRead.status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('Swagger UI’s staff login in a real browser (the development staff provider, authorization code + PKCE)', () => {
  let idp: DevIdentityProvider;
  let staffIdp: DevIdentityProvider;
  let sut: TestApp;
  let browser: Browser;
  let admin: string;
  let customer: string;

  beforeAll(async () => {
    // As `npm start` runs them: the end users' provider and the company's, each with its Swagger UI client.
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
    staffIdp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway:staff', staff: true });
    sut = await startTestApp(
      { END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64') },
      { development: { identityProvider: asTrustedProvider(idp.issuer), staffProvider: asTrustedStaffProvider(staffIdp.issuer) } },
    );
    admin = await sut.createClient('admin');
    customer = await createCustomer(sut.baseUrl, await sut.createClient('partner'));
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await sut?.close();
    await staffIdp?.close();
    await idp?.close();
  });

  /** What a staff member does at the company's provider's form. */
  const signIn = async (page: Page, user: string) => {
    await page.locator('input[name="login"]').fill(user);
    await page.locator('input[name="password"]').fill(user);
    await page.locator('button[type="submit"]').click();
  };

  it('when a staff member opens /docs, then they sign in at the company’s provider, and Authorize’s staff login runs an audit search about a customer with a reason, recorded under their name', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1600 } });
    const page = await context.newPage();
    await page.goto(`${sut.baseUrl}/docs`);
    // No admin prompt: the company's sign-in.
    expect(page.url().startsWith(staffIdp.issuer)).toBe(true);
    await signIn(page, 'sam');
    await page.locator('.swagger-ui .info .title').waitFor();
    expect(new URL(page.url()).pathname).toBe('/docs');

    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux .auth-container h4').nth(2).waitFor();
    const schemes = (await page.locator('.modal-ux .auth-container h4').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
    const staff = page.locator(
      'xpath=//h4[contains(., "staff") and contains(., "authorization_code")]/ancestor::div[.//button[contains(@class, "authorize")]][1]',
    );
    await staff.locator('input[data-name="clientId"]').waitFor();
    const popup = page.waitForEvent('popup');
    await staff.locator('button.authorize').click();
    const login = await popup;
    // Signed in at the provider already (single sign-on): the popup may close by itself, or ask again.
    // Waiting for the form ends when it shows or when the popup closes (its page is gone): no timer decides which.
    const closed = login.waitForEvent('close');
    const form = login
      .locator('input[name="login"]')
      .waitFor({ timeout: 60_000 })
      .then(
        () => 'form',
        () => 'closed',
      );
    if ((await Promise.race([closed.then(() => 'closed'), form])) === 'form') await Promise.all([closed, signIn(login, 'sam')]);
    await page.locator('.modal-ux button', { hasText: 'Logout' }).first().waitFor();
    await page.locator('.modal-ux button.close-modal').click();

    const { shownStatus, body } = await tryItOut(page, '/api/v1/audit-events', 'swagger-ui-staff.png', async (operation) => {
      await operation.locator('tr[data-param-name="customer_id"] input').fill(customer);
      await operation.locator('tr[data-param-name="reason"] input').fill('SUP-9 customer called');
    });
    await context.close();

    expect(schemes).toEqual(['bearer (http, Bearer)', 'end-user (OAuth2, authorization_code with PKCE)', 'staff (OAuth2, authorization_code with PKCE)']);
    expect(shownStatus).toBe('200');
    expect(JSON.parse(body)).toMatchObject({
      status: 200,
      data: { events: [expect.objectContaining({ operation: 'customer.create', customer_id: customer })] },
    });
    const [search] = await sut.dataSource.query<Record<string, unknown>[]>(
      `SELECT staff_id, client_name, staff_roles, access_reason FROM audit_events WHERE operation = 'audit.query' AND customer_id = $1`,
      [customer],
    );
    expect(search).toEqual({ staff_id: 'sam', client_name: 'Sam Support', staff_roles: 'support', access_reason: 'SUP-9 customer called' });
    // Each use of Swagger UI through the sign-in is audited under their name too (its page, its files, its document).
    const uses = await sut.dataSource.query<Record<string, unknown>[]>(
      `SELECT DISTINCT staff_id, client_name, staff_roles, caller_kind FROM audit_events WHERE operation = 'admin.docs' AND http_status < 400`,
    );
    const routes = await sut.dataSource.query<{ route: string }[]>(`SELECT DISTINCT route FROM audit_events WHERE operation = 'admin.docs'`);
    expect(uses).toEqual([{ staff_id: 'sam', client_name: 'Sam Support', staff_roles: 'support', caller_kind: 'staff' }]);
    expect(routes.map((row) => row.route)).toEqual(expect.arrayContaining(['/docs', '/docs/swagger-ui-init.js']));
  });

  it('when pat (every role, no second factor) signs in to /docs, then the sign-in is refused with 401 AUTH.MFA_REQUIRED, and again at the next visit', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${sut.baseUrl}/docs`);
    const [answer] = await Promise.all([page.waitForResponse((response) => new URL(response.url()).pathname === '/staff/callback'), signIn(page, 'pat')]);
    const refused = (await answer.json()) as { error?: { code?: string; id?: string } };
    // Signed in at the provider, but not here: /docs goes round to the sign-in, which refuses again.
    const [again] = await Promise.all([
      page.waitForResponse((response) => new URL(response.url()).pathname === '/staff/callback'),
      page.goto(`${sut.baseUrl}/docs`),
    ]);
    const shown = new URL(page.url()).pathname;
    await context.close();

    expect([answer.status(), refused.error?.code]).toEqual([401, 'AUTH.MFA_REQUIRED']);
    expect(refused.error?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect([again.status(), shown]).toEqual([401, '/staff/callback']);
  });

  it('when /docs is asked for without a sign-in, with a forged sign-in cookie, or with an admin token (break-glass), then the first two are sent to sign in and the third is served', async () => {
    const plain = await fetch(`${sut.baseUrl}/docs`, { redirect: 'manual' });
    const forged = await fetch(`${sut.baseUrl}/docs-json`, {
      redirect: 'manual',
      headers: { cookie: '__Host-gw_staff=eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..x.y.z' },
    });
    const start = await fetch(`${sut.baseUrl}${plain.headers.get('location')}`, { redirect: 'manual' });
    const breakGlass = await fetch(`${sut.baseUrl}/docs-json`, {
      redirect: 'manual',
      headers: { authorization: `Basic ${Buffer.from(`admin:${admin}`).toString('base64')}` },
    });
    const evil = await fetch(`${sut.baseUrl}/staff/login?return_to=${encodeURIComponent('https://evil.example/')}`, { redirect: 'manual' });

    expect([plain.status, plain.headers.get('location')]).toEqual([302, '/staff/login?return_to=%2Fdocs']);
    expect([forged.status, forged.headers.get('location')]).toEqual([302, '/staff/login?return_to=%2Fdocs-json']);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(staffIdp.issuer);
    // The development provider takes pushed authorization requests (RFC 9126): the code challenge and the redirect URI went there.
    expect(authorize.searchParams.get('client_id')).toBe('swagger-ui');
    expect(authorize.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    expect(start.headers.get('set-cookie')).toMatch(/^__Host-gw_staff_login=[^;]+; Max-Age=600; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    expect(breakGlass.status).toBe(200);
    expect(evil.status).toBe(302);
    // The sign-in comes back to /docs whatever return_to named: only paths of Swagger UI are kept.
    expect(evil.headers.get('location')!.startsWith(staffIdp.issuer)).toBe(true);
  });
});
