import { API_VERSIONS, CURRENT_API_VERSION } from '../../src/common/domain/api-versions';
import { ApiClientsService } from '../../src/auth/domain/api-clients.service';
import { startTestApp, TestApp } from '../support/app';
import { callApi } from '../support/http';

/** docs/api-contract.md, "Versions": a request names its version, a client is pinned to one, every answer says which. */
describe('API versions (Gateway-Version)', () => {
  let t: TestApp;
  let partner: string;

  beforeAll(async () => {
    t = await startTestApp();
    partner = await t.createClient('partner');
  });
  afterAll(async () => {
    await t.close();
  });

  it('when a request names no version, then it is answered under its client’s pinned one, and the answer says so', async () => {
    const answer = await callApi(t.baseUrl, 'GET', '/api/v1/me', { token: partner });

    expect([answer.status, answer.headers.get('gateway-version')]).toEqual([200, CURRENT_API_VERSION]);
  });

  it('when a request names a version the gateway knows, then it is answered under it', async () => {
    const answer = await callApi(t.baseUrl, 'GET', '/api/v1/me', { token: partner, headers: { 'Gateway-Version': API_VERSIONS[0] } });

    expect([answer.status, answer.headers.get('gateway-version')]).toEqual([200, API_VERSIONS[0]]);
  });

  it.each([
    ['a version that does not exist', '2031-01-01'],
    ['no date at all', 'latest'],
    ['two versions', `${CURRENT_API_VERSION}, ${CURRENT_API_VERSION}`],
  ])('when a request names %s, then it is refused 400 naming Gateway-Version, never answered under another', async (_what, version) => {
    const answer = await callApi(t.baseUrl, 'GET', '/api/v1/me', { token: partner, headers: { 'Gateway-Version': version } });

    expect([answer.status, answer.body.error?.code, answer.body.error?.fields]).toEqual([
      400,
      'REQUEST.VALIDATION_FAILED',
      [{ field: 'Gateway-Version', message: `Gateway-Version must be one of ${API_VERSIONS.join(', ')}` }],
    ]);
    expect(answer.headers.get('gateway-version')).toBe(CURRENT_API_VERSION);
  });

  it('when an answer is an error before any route, then it names the current version too', async () => {
    const unrouted = await callApi(t.baseUrl, 'GET', '/api/v1/nowhere', { token: partner });
    const unauthenticated = await callApi(t.baseUrl, 'GET', '/api/v1/me');

    expect([unrouted.status, unrouted.headers.get('gateway-version')]).toEqual([404, CURRENT_API_VERSION]);
    expect([unauthenticated.status, unauthenticated.headers.get('gateway-version')]).toEqual([401, CURRENT_API_VERSION]);
  });

  it('when a client is made, then it is pinned to the current version, listed with it, and an unknown version is refused', async () => {
    const admin = await t.createClient('admin');
    const listed = await callApi<{ name: string; api_version: string }[]>(t.baseUrl, 'GET', '/api/v1/clients', { token: admin });

    expect(listed.body.data!.map((client) => client.api_version)).toEqual([CURRENT_API_VERSION, CURRENT_API_VERSION]);
    await expect(
      t.app.get(ApiClientsService).create({ name: 'from-the-future', role: 'partner', tenant: 'default', expiresAt: null, apiVersion: '2031-01-01' }),
    ).rejects.toThrow('api version must be one of 2026-12-01');
    const [{ api_version }] = await t.asOwner<{ api_version: string }>(`SELECT api_version FROM api_clients LIMIT 1`);
    expect(api_version).toBe(CURRENT_API_VERSION);
  });
});
