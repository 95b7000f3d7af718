import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { startTestApp, TestApp } from '../support/app';
import { launchChromium } from '../support/browser';
import { createCustomer } from '../support/http';
import { asTrustedProvider, DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';

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

describe('Swagger UI’s end-user login in a real browser (the development OpenID provider, authorization code + PKCE)', () => {
  let idp: DevIdentityProvider;
  let sut: TestApp;
  let browser: Browser;
  let admin: string;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
    sut = await startTestApp(
      { END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64') },
      { development: { identityProvider: asTrustedProvider(idp.issuer) } },
    );
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
    // The code flow (with PKCE) is the one a browser app uses; Swagger UI shows a form per flow the provider advertises.
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

    expect(shownStatus).toBe('200');
    expect(JSON.parse(body)).toMatchObject({ status: 200, data: { role: 'end_user', scopes: expect.arrayContaining(['balances:read']) } });
  });
});
