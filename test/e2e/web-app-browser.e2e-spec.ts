import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';
import { serveWebApp } from '../../dev/web-app/serve-web-app';
import { startTestApp, TestApp } from '../support/app';
import { launchChromium } from '../support/browser';
import { callApi, createCustomer } from '../support/http';
import { TEST_AUDIENCE } from '../support/oidc';
import { JWT_LIKE, webClientEnv } from '../support/sessions';
import { waitFor } from '../support/wait-for';

const OUTPUT = join(process.cwd(), 'test-output');

/**
 * The reference web app (web-app/, served at /app/) in a real browser: Debian's Chromium driven by
 * Playwright, the development OpenID provider's own login form, two replicas on one database.
 * What a partner's front-end developer copies, tried as a user and as an attacker.
 */
describe('the reference web app in a real browser (the browser session of RFC 10017)', () => {
  let idp: DevIdentityProvider;
  let t: TestApp;
  let replica: TestApp;
  let browser: Browser;
  let customerId: string;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: TEST_AUDIENCE });
    const env = webClientEnv(idp.issuer);
    t = await startTestApp(env, { routes: serveWebApp });
    replica = await startTestApp(env, { database: t.database });
    await idp.setWebOrigins([t.baseUrl]);
    const partner = await t.createClient('partner');
    customerId = await createCustomer(t.baseUrl, partner);
    await callApi(t.baseUrl, 'POST', `/api/v1/customers/${customerId}/end-user`, { token: partner, body: { subject: 'demo', issuer: idp.issuer } });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await replica?.app.close();
    await replica?.sandbox.close();
    await t?.close();
    await idp?.close();
  });

  /** A fresh browser profile whose every response body is kept, and whose page errors are noted. */
  async function openBrowser(): Promise<{ context: BrowserContext; page: Page; bodies: string[]; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 1400 } });
    const page = await context.newPage();
    const bodies: string[] = [];
    const problems: string[] = [];
    page.on('response', (response) => {
      // Redirects have no body to read.
      if (response.status() < 300 || response.status() >= 400)
        void response.text().then(
          (text) => bodies.push(text),
          () => undefined,
        );
    });
    page.on('pageerror', (error) => problems.push(error.message));
    return { context, page, bodies, problems };
  }

  /** The app's Log in, the provider's form, and back to the app, logged in. */
  async function logIn(page: Page, user: string): Promise<void> {
    await page.goto(`${t.baseUrl}/app/`);
    await page.locator('#login').click();
    await page.locator('input[name="login"]').fill(user);
    await page.locator('input[name="password"]').fill(user);
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(`${t.baseUrl}/app/`);
    await page.locator('#user-id').filter({ hasText: /.+/ }).waitFor();
  }

  it('when demo logs in through the app, then the app names them as their provider does (their name, never only a pseudonym)', async () => {
    const { context, page, problems } = await openBrowser();
    try {
      await logIn(page, 'demo');

      await expect(page.locator('#user-name').textContent()).resolves.toMatch(/^Demo User/);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  const sessionCookieOf = async (context: BrowserContext) => (await context.cookies(t.baseUrl)).find((cookie) => cookie.name === '__Host-gw_session');
  const withCookie = (base: string, value: string) =>
    callApi(base, 'GET', '/api/v1/session', { headers: { cookie: `__Host-gw_session=${value}`, 'x-csrf': '1' } });

  it('when demo logs in through the app, opens an account, finds it listed, reads its balance and logs out, then no token ever reaches the page and the old cookie is refused', async () => {
    const { context, page, bodies, problems } = await openBrowser();
    await logIn(page, 'demo');
    // The lists are rendered after the session is read: the customer's option is the last of it.
    await page.locator('#account-customer option').first().waitFor({ state: 'attached' });
    const noAccounts = await page.locator('#no-accounts').isVisible();
    const customerOption = await page.locator('#account-customer option').first().innerText();

    await page.locator('#open-account button[type="submit"]').click();
    // Where the user acted: under the form, not at the page's top.
    await page.locator('#open-account #open-account-status').filter({ hasText: 'Account opened' }).waitFor();
    const opened = await page.locator('#open-account-status').innerText();
    const item = page.locator('#accounts li').first();
    await item.waitFor();
    const listed = await page.locator('#accounts').innerText();
    await item.locator('button.show-balance').click();
    await item.locator('.balance').filter({ hasText: 'Balance' }).waitFor();
    const balance = await item.locator('.balance').innerText();
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'web-app-logged-in.png'), fullPage: true });

    const cookie = await sessionCookieOf(context);
    // What any script on the page (a cross-site script too) could read.
    const seenByScript = await page.evaluate<{ cookie: string; local: string; session: string }>(
      '({ cookie: document.cookie, local: JSON.stringify({ ...localStorage }), session: JSON.stringify({ ...sessionStorage }) })',
    );
    const withoutHeader = await page.evaluate(() => fetch('/api/v1/session', { credentials: 'same-origin' }).then((response) => response.status));

    await page.locator('#logout').click();
    // The provider's own logout page (RP-initiated logout), then back to the app.
    await page.locator('button[name="logout"][value="yes"]').click();
    await page.waitForURL(`${t.baseUrl}/app/`);
    await page.locator('#login').waitFor();
    const afterLogout = await withCookie(t.baseUrl, cookie!.value);
    await context.close();

    // Amounts with their currency, not the envelope's JSON; the account by the numbers it is paid into (EUR: its IBAN).
    expect(balance).toMatch(/^Balance: .*€.* available, .*€.* booked/);
    expect(balance).not.toMatch(/[{}"]/);
    expect(opened).toMatch(/^Account opened \(EUR, \w+\): IBAN [A-Z]{2}\d{2}( [0-9A-Z]{1,4})+$/);
    // The list names accounts as the user knows them: currency and the last four of the IBAN, no id, not the whole number.
    const iban = opened.replace(/^.*IBAN /, '').replace(/ /g, '');
    expect(noAccounts).toBe(true);
    expect(listed).toMatch(new RegExp(`^EUR account •••• ${iban.slice(-4)} \\(active\\), opened `));
    expect(listed).not.toContain(iban);
    expect(listed).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(customerOption).toMatch(/^Customer since .* · 0 accounts$/);
    expect(customerOption).not.toContain(customerId);
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/', domain: '127.0.0.1' });
    expect(seenByScript.cookie).not.toContain('gw_session');
    for (const stored of Object.values(seenByScript)) expect(stored).not.toMatch(JWT_LIKE);
    expect(bodies.length).toBeGreaterThan(5);
    for (const body of bodies) expect(body).not.toMatch(JWT_LIKE);
    expect(withoutHeader).toBe(403);
    expect([afterLogout.status, afterLogout.body.error?.code]).toEqual([401, 'SESSION.ENDED']);
    expect(problems).toEqual([]);
  });

  it('when a link asks the login to return to another origin, then the browser stays here with a 400 and never reaches the provider', async () => {
    const { context, page } = await openBrowser();

    const answer = await page.goto(`${t.baseUrl}/api/v1/session/login?return_to=${encodeURIComponent('https://evil.example/')}`);
    const body = await answer!.text();
    const url = page.url();
    await context.close();

    expect(answer!.status()).toBe(400);
    expect(JSON.parse(body)).toMatchObject({ error: { code: 'SESSION.RETURN_TO_REFUSED' } });
    expect(url.startsWith(t.baseUrl)).toBe(true);
  });

  it('when the user logs out at the provider, then its back-channel logout ends the session that another replica holds', async () => {
    const { context, page } = await openBrowser();
    await logIn(page, 'demo');
    const cookie = (await sessionCookieOf(context))!;
    const held = await withCookie(replica.baseUrl, cookie.value);

    await page.goto(`${idp.issuer}/session/end?client_id=partner-web`);
    await page.locator('button[name="logout"][value="yes"]').click();
    await page.waitForLoadState();
    const ended = await waitFor(
      async () => {
        const answer = await withCookie(replica.baseUrl, cookie.value);
        return answer.status === 401 ? answer : undefined;
      },
      { what: 'the other replica to refuse the session', timeoutMs: 5000 },
    );
    await page.goto(`${t.baseUrl}/app/`);
    await page.locator('#login').waitFor();
    await context.close();

    expect(held.status).toBe(200);
    expect(ended.body.error?.code).toBe('SESSION.ENDED');
  });
});
