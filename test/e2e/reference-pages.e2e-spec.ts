import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, TestApp } from '../support/app';
import { launchChromium } from '../support/browser';
import { buildCustomerRequest } from '../support/builders';
import { callApi } from '../support/http';
import { rawExchange } from '../support/raw-http';

/**
 * Docs that open: every error answer links its code's entry in the error catalogue, which the
 * gateway itself serves as HTML, so a partner without the repository follows it.
 */
describe('the reference pages and error.doc_url', () => {
  let t: TestApp;
  let partner: string;

  beforeAll(async () => {
    t = await startTestApp();
    partner = await t.createClient('partner');
  });
  afterAll(async () => {
    await t.close();
  });

  /** The page a link names, fetched, and whether it holds the element its fragment names. */
  async function follow(link: string): Promise<{ status: number; type: string | null; anchored: boolean }> {
    const url = new URL(link);
    const response = await fetch(url.href.replace(url.hash, ''));
    const html = await response.text();
    return { status: response.status, type: response.headers.get('content-type'), anchored: html.includes(`id="${url.hash.slice(1)}"`) };
  }

  it('when a request is refused, then its envelope’s doc_url is an absolute link to the code’s entry, which opens as HTML', async () => {
    const refused = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: buildCustomerRequest({ email: 'no' }) });

    const docUrl = refused.body.error!.doc_url!;

    expect(docUrl).toBe(`${t.baseUrl}/reference/errors#request-validation-failed`);
    expect(await follow(docUrl)).toEqual({ status: 200, type: 'text/html; charset=utf-8', anchored: true });
  });

  it('when the request log shows a failed request, then its doc_url is the same link, and it opens', async () => {
    const refused = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token: partner, body: buildCustomerRequest({ phone_number: 'x' }) });
    const listed = await callApi<{ requests: { error: { doc_url: string } | null }[] }>(
      t.baseUrl,
      'GET',
      `/api/v1/requests?error_id=${refused.body.error!.id}`,
      { token: partner },
    );

    const docUrl = listed.body.data!.requests[0].error!.doc_url;

    expect(docUrl).toBe(`${t.baseUrl}/reference/errors#request-validation-failed`);
    expect(await follow(docUrl)).toEqual({ status: 200, type: 'text/html; charset=utf-8', anchored: true });
  });

  it('when any code is refused, even before routing or on a path nothing serves, then it links its own entry; a refusal of the request’s own headers links nowhere but a configured origin', async () => {
    const unknown = await callApi(t.baseUrl, 'GET', '/api/v1/nothing-here', { token: partner });
    const unauthenticated = await callApi(t.baseUrl, 'GET', '/api/v1/me');
    const malformed = await rawExchange(t.baseUrl, 'GET /health/live HTTP/1.1\r\nHost: evil.example\r\nHost: b\r\nConnection: close\r\n\r\n');
    const notHttp = await rawExchange(t.baseUrl, 'GARBAGE\r\n\r\n');
    const twoTokens = await rawExchange(
      t.baseUrl,
      `GET /api/v1/me HTTP/1.1\r\nHost: ${new URL(t.baseUrl).host}\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\nConnection: close\r\n\r\n`,
    );

    const links = [unknown.body, unauthenticated.body, twoTokens.body, malformed.body, notHttp.body].map((body) => body?.error?.doc_url);

    expect(links).toEqual([
      `${t.baseUrl}/reference/errors#route-not-found`,
      `${t.baseUrl}/reference/errors#auth-token-missing`,
      `${t.baseUrl}/reference/errors#request-malformed`,
      undefined,
      undefined,
    ]);
    expect([malformed.body?.error?.id, notHttp.body?.error?.id]).toEqual([expect.any(String), expect.any(String)]);
    for (const link of links.slice(0, 3)) expect(await follow(link!)).toMatchObject({ status: 200, anchored: true });
  });

  it('when the pages are read, then each is HTML under the gateway’s CSP, their links between them resolve, and an unknown page is 404 in the envelope', async () => {
    const pages = ['errors', 'field-rules', 'api-contract', 'changelog'];
    const answers = await Promise.all(pages.map((page) => fetch(`${t.baseUrl}/reference/${page}`)));
    const html = await Promise.all(answers.map((answer) => answer.text()));
    const internal = [...new Set(html.flatMap((text) => [...text.matchAll(/href="(\/reference\/[^"]+)"/g)].map((match) => match[1])))];
    const missing = await callApi(t.baseUrl, 'GET', '/reference/secrets');

    expect(answers.map((answer) => [answer.status, answer.headers.get('content-type')])).toEqual(pages.map(() => [200, 'text/html; charset=utf-8']));
    expect(answers.every((answer) => answer.headers.get('content-security-policy')?.includes("default-src 'self'"))).toBe(true);
    expect(internal.length).toBeGreaterThan(5);
    for (const link of internal)
      expect({ link, ...(await follow(`${t.baseUrl}${link.includes('#') ? link : `${link}#`}`)) }).toMatchObject({ link, status: 200 });
    for (const link of internal.filter((l) => l.includes('#')))
      expect({ link, ...(await follow(`${t.baseUrl}${link}`)) }).toMatchObject({ link, anchored: true });
    expect([missing.status, missing.body.error?.code]).toEqual([404, 'ROUTE.NOT_FOUND']);
    // An error is never cached, though the pages are: its doc_url is on the origin this request named.
    expect([answers[0].headers.get('cache-control'), missing.headers.get('cache-control')]).toEqual(['public, max-age=300', 'no-store']);
    expect((await fetch(`${t.baseUrl}/reference/reference.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
  });
});

describe('a doc_url in a real browser', () => {
  it('when Chromium opens a refusal’s doc_url on a phone’s width, then the code’s row is in view and marked, under the strict CSP', async () => {
    const t = await startTestApp();
    const browser = await launchChromium();
    try {
      const refused = await callApi(t.baseUrl, 'GET', `/api/v1/customers/not-a-uuid/balance`, { token: await t.createClient('partner') });
      const docUrl = refused.body.error!.doc_url!;
      const page = await browser.newPage({ viewport: { width: 375, height: 740 } });
      const refusedByPolicy: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) refusedByPolicy.push(message.text());
      });

      const answer = await page.goto(docUrl);
      // Read in the page (its DOM's own types are the browser's, not this file's).
      const { inView, marked, styled } = await page.evaluate<{ inView: boolean; marked: boolean; styled: string }>(`(() => {
        const anchor = document.getElementById('request-validation-failed');
        const row = anchor.closest('tr');
        const box = row.getBoundingClientRect();
        return {
          inView: box.bottom > 0 && box.top < window.innerHeight,
          marked: anchor.matches(':target') && getComputedStyle(row).backgroundColor === 'rgb(255, 244, 194)',
          styled: getComputedStyle(document.body).maxWidth,
        };
      })()`);
      mkdirSync(join(process.cwd(), 'test-output'), { recursive: true });
      await page.screenshot({ path: join(process.cwd(), 'test-output', 'reference-errors-375.png') });

      expect([answer?.status(), inView, marked, styled, refusedByPolicy]).toEqual([200, true, true, '1152px', []]);
    } finally {
      await browser.close();
      await t.close();
    }
  });
});

describe('error.doc_url where the operator says', () => {
  it('when PUBLIC_BASE_URL is set, then the link is on it; when ERROR_DOCS_URL is set, then on that page', async () => {
    const onPublic = await startTestApp({ PUBLIC_BASE_URL: 'https://gateway.partner.example' });
    const elsewhere = await startTestApp({ ERROR_DOCS_URL: 'https://docs.partner.example/gateway/errors' });
    try {
      const [a, b] = await Promise.all([callApi(onPublic.baseUrl, 'GET', '/api/v1/me'), callApi(elsewhere.baseUrl, 'GET', '/api/v1/me')]);
      const notHttp = await rawExchange(onPublic.baseUrl, 'GARBAGE\r\n\r\n');

      expect([a.body.error?.doc_url, b.body.error?.doc_url, notHttp.body?.error?.doc_url]).toEqual([
        'https://gateway.partner.example/reference/errors#auth-token-missing',
        'https://docs.partner.example/gateway/errors#auth-token-missing',
        'https://gateway.partner.example/reference/errors#request-malformed',
      ]);
    } finally {
      await onPublic.close();
      await elsewhere.close();
    }
  });
});
