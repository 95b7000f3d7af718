import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenAPIObject } from '@nestjs/swagger';
import { forThisDeployment, SWAGGER_DISCOVERY_PATH, withoutDailyExamples } from '../../src/swagger';
import { startTestApp, TestApp } from '../support/app';
import { runProcess } from '../support/processes';

// openapi.json is checked in for partners' code generators and for the linter in .ci/run. When the
// API changes, `npm run openapi:export` rewrites it, and these tests say when that was forgotten.
const CHECKED_IN = join(process.cwd(), 'openapi.json');
const EXPORT = join(process.cwd(), 'dist', 'dev', 'openapi.cli.js');

describe('openapi.json', () => {
  let sut: TestApp;

  beforeAll(async () => {
    // With an OpenID provider whose discovery document is the one openapi.json names as an example.
    sut = await startTestApp({ OIDC_ISSUER: 'https://login.partner.example', END_USER_PSEUDONYM_KEY: 'b3BlbmFwaS1maWxlLXRlc3Qta2V5LW9mLTMyLWJ5dGVzISE=' });
  });

  afterAll(async () => {
    await sut.close();
  });

  it('when compared with the document the service serves, then they are the same but for the examples that change daily and what this deployment offers a Swagger user', async () => {
    const admin = await sut.createClient('admin');
    const served = (await (await fetch(`${sut.baseUrl}/docs-json`, { headers: { authorization: `Bearer ${admin}` } })).json()) as OpenAPIObject;

    const file = JSON.parse(readFileSync(CHECKED_IN, 'utf8')) as OpenAPIObject;

    // The provider's login read through the gateway, and no browser-session cookie (which Swagger UI cannot send).
    expect(withoutDailyExamples(served)).toEqual(forThisDeployment(structuredClone(file), SWAGGER_DISCOVERY_PATH));
    expect(served.components?.securitySchemes?.['browser-session']).toBeUndefined();
    expect(file.components?.securitySchemes?.['browser-session']).toBeDefined();
  });

  it('when a generator names its types and functions, then it takes the API’s own words, never the service’s class names', () => {
    const file = JSON.parse(readFileSync(CHECKED_IN, 'utf8')) as OpenAPIObject;
    const operationIds = Object.values(file.paths).flatMap((operations) =>
      Object.values(operations as Record<string, { operationId?: string }>).map((o) => o.operationId),
    );

    expect(file.openapi).toBe('3.1.0');
    expect(Object.keys(file.components?.schemas ?? {}).filter((name) => /(Dto|Schema)$/.test(name))).toEqual([]);
    expect(operationIds.filter((id) => id === undefined || !/^[a-z][A-Za-z]+$/.test(id) || id.includes('Controller'))).toEqual([]);
    expect(new Set(operationIds).size).toBe(operationIds.length);
  });

  it('when the security scheme is read, then it says the tokens are opaque client tokens, not JWTs', () => {
    const file = JSON.parse(readFileSync(CHECKED_IN, 'utf8')) as OpenAPIObject;

    expect(file.components?.securitySchemes?.bearer).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque client token (pgw_…)' });
  });

  it('when an end user’s operation is read, then it accepts a client token, an end user’s access token with its scope, or a web app’s session cookie', () => {
    const file = JSON.parse(readFileSync(CHECKED_IN, 'utf8')) as OpenAPIObject;

    expect(file.components?.securitySchemes?.['browser-session']).toMatchObject({ type: 'apiKey', in: 'cookie', name: '__Host-gw_session' });
    expect(file.paths['/api/v1/customers/{customer_id}/balance'].get?.security).toEqual([
      { bearer: [] },
      { 'end-user': ['balances:read'] },
      { 'browser-session': [] },
    ]);
  });

  it('when the export script runs, then it writes exactly the checked-in file', async () => {
    const target = join(mkdtempSync(join(tmpdir(), 'pgw-openapi-')), 'openapi.json');

    const result = await runProcess(EXPORT, [target], { PATH: process.env.PATH });

    expect(result.code).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(readFileSync(CHECKED_IN, 'utf8'));
  });
});
