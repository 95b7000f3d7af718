import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, TestApp } from '../support/app';
import { buildCustomerRequest } from '../support/builders';
import { callApi } from '../support/http';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const CLIENT = join(process.cwd(), 'clients', 'typescript');
const TSC = join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc');

/** A partner's app, in JavaScript: plain ESM, run by plain node. */
const APP_JS = `
import { createGatewayClient, errorCodeOf, wasReplayed } from '@partner-gateway/client';
const [baseUrl, token] = process.argv.slice(2);
const api = createGatewayClient({ baseUrl, token });
const me = await api.GET('/api/v1/me');
const refused = await api.POST('/api/v1/customers', { body: { first_name: 'Ada' } });
console.log(JSON.stringify({ status: me.response.status, me: me.data.data, refused: refused.response.status, code: errorCodeOf(refused.error), replayed: wasReplayed(me.response) }));
`;

/** A partner's app, in TypeScript: the package's declarations must type it, and refuse a wrong body. */
const APP_TS = `
import { createGatewayClient, errorCodeOf, type ErrorCode } from '@partner-gateway/client';
const api = createGatewayClient({ baseUrl: 'http://127.0.0.1:1', token: 't' });
export async function open(customerId: string): Promise<string | ErrorCode | undefined> {
  const answer = await api.POST('/api/v1/bank-accounts', {
    body: {
      customer_id: customerId,
      // @ts-expect-error: USD is not a currency the API takes (were the types missing, this line would not be an error, and the directive would fail the build)
      currency: 'USD',
      phone_number: '+447700900123', document_type: 'passport', document_number: 'X', issued_country_code: 'GB', issued_by: 'HMPO',
      issued_date: '2020-01-15', expiration_date: '2030-01-31', country: 'GB', zip_code: 'SW1A 1AA', street: '1 Horse Guards Road', date_of_birth: '1990-12-10',
    },
  });
  // Every error answer has a code, the 401 too (AUTH.TOKEN_MISSING, AUTH.INVALID_TOKEN, …).
  return answer.data ? answer.data.data.id : errorCodeOf(answer.error);
}
`;

/**
 * clients/typescript as a partner installs it: `npm pack` builds it to JavaScript with its
 * declarations, a scratch project installs the tarball, and plain `node` runs an ESM app against the
 * running service (on this suite's Node: .ci/run runs the suite on Node 20 and on the LTS).
 */
describe('the typed client as a package', () => {
  let t: TestApp;
  let scratch: string;

  beforeAll(async () => {
    // The receipt's proof is asked for every 200 ms until the service has sealed it, which an open
    // transaction anywhere on the cluster can hold back: reads of the log are limited to 60 a minute.
    t = await startTestApp({ RATE_LIMIT_REQUEST_LOG_PER_MINUTE: '100000' });
    scratch = mkdtempSync(join(tmpdir(), 'pgw-client-app-'));
    chmodSync(scratch, 0o755);
  });
  afterAll(async () => {
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('when the packed tarball is installed in a new project, then plain node runs an ESM app with it and tsc types an app with its declarations', async () => {
    await run('npm', ['pack', '--silent', '--pack-destination', scratch], { cwd: CLIENT });
    const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'))!;
    const { stdout: listing } = await run('tar', ['tzf', join(scratch, tarball)]);
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'partner-app', private: true, type: 'module' }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${tarball}`], { cwd: scratch });
    writeFileSync(join(scratch, 'app.mjs'), APP_JS);
    writeFileSync(join(scratch, 'app.ts'), APP_TS);

    const { stdout } = await run(process.execPath, ['app.mjs', t.baseUrl, await t.createClient('partner', { name: 'packaged-app' })], { cwd: scratch });
    const compiled = await run(
      process.execPath,
      [TSC, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom', 'app.ts'],
      { cwd: scratch },
    ).then(
      () => 'compiled',
      (error: { stdout: string }) => error.stdout,
    );

    expect(listing.split('\n').filter(Boolean).sort()).toEqual([
      'package/README.md',
      'package/dist/index.d.ts',
      'package/dist/index.js',
      'package/dist/receipts-cli.d.ts',
      'package/dist/receipts-cli.js',
      'package/dist/receipts.d.ts',
      'package/dist/receipts.js',
      'package/dist/schema.d.ts',
      'package/dist/schema.js',
      'package/dist/webhooks.d.ts',
      'package/dist/webhooks.js',
      'package/package.json',
    ]);
    expect(JSON.parse(stdout)).toEqual({
      status: 200,
      me: expect.objectContaining({ name: 'packaged-app', role: 'partner' }),
      refused: 400,
      code: 'REQUEST.VALIDATION_FAILED',
      replayed: false,
    });
    expect(compiled).toBe('compiled');
  });

  it('when its README’s TypeScript examples are compiled against the installed package, then each compiles, and its install command names the tarball npm pack makes', async () => {
    // The README as the package ships it (run after the test above installed it).
    const readme = readFileSync(join(scratch, 'node_modules', '@partner-gateway', 'client', 'README.md'), 'utf8');
    const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map(([, code]) => code);
    examples.forEach((code, index) => writeFileSync(join(scratch, `readme-${index + 1}.ts`), code));
    const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'))!;

    const compiled = await Promise.all(
      examples.map((_, index) =>
        run(
          process.execPath,
          [
            TSC,
            '--noEmit',
            '--strict',
            '--module',
            'nodenext',
            '--moduleResolution',
            'nodenext',
            '--target',
            'es2022',
            '--lib',
            'es2022,dom',
            '--types',
            'node',
            '--typeRoots',
            join(process.cwd(), 'node_modules', '@types'),
            `readme-${index + 1}.ts`,
          ],
          { cwd: scratch },
        ).then(
          () => 'compiled',
          (error: { stdout: string }) => error.stdout,
        ),
      ),
    );

    expect(examples.length).toBeGreaterThanOrEqual(3);
    expect(compiled).toEqual(examples.map(() => 'compiled'));
    expect(readme).toContain(`npm run -s client:pack        # prints ${tarball},`);
    expect(readme).toMatch(new RegExp(`^npm install \\S+/clients/typescript/${tarball.replace(/\./g, '\\.')}$`, 'm'));
  });

  it('when a receipt, its proof and the keys are saved, then the package’s partner-gateway-receipts and `npm run -s receipts` verify them offline, and name what an altered one fails on', async () => {
    const token = await t.createClient('partner', { name: 'receipts-app' });
    const created = await callApi(t.baseUrl, 'POST', '/api/v1/customers', { token, body: buildCustomerRequest() });
    const receipt = created.headers.get('audit-receipt')!;
    const eventId = (JSON.parse(Buffer.from(receipt.split('.')[1], 'base64url').toString()) as { event_id: string }).event_id;
    // The service seals every second; the proof is there once it has.
    const proof = await waitFor(
      async () => {
        const answer = await callApi<{ event_hash: string }>(t.baseUrl, 'GET', `/api/v1/receipts/${eventId}`, { token });
        return answer.status === 200 ? answer.body : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'the receipt’s proof' },
    );
    writeFileSync(join(scratch, 'receipt.jws'), receipt);
    writeFileSync(join(scratch, 'proof.json'), JSON.stringify(proof));
    writeFileSync(join(scratch, 'altered-proof.json'), JSON.stringify({ ...proof, data: { ...proof.data, event_hash: '0'.repeat(64) } }));
    writeFileSync(join(scratch, 'keys.json'), await (await fetch(`${t.baseUrl}/.well-known/audit-keys.json`)).text());
    const [header, , signature] = receipt.split('.');
    const forged = `${header}.${Buffer.from('{"event_id":"x"}').toString('base64url')}.${signature}`;
    /** Offline: no gateway is named, and the keys are the saved file. */
    const verify = (command: string, args: string[], cwd: string) =>
      run(command, [...args, '--keys', join(scratch, 'keys.json')], { cwd }).then(
        ({ stdout }) => ({ code: 0, out: JSON.parse(stdout) as Record<string, unknown> }),
        (error: { code: number; stdout: string }) => ({ code: error.code, out: JSON.parse(error.stdout) as Record<string, unknown> }),
      );
    const bin = join(scratch, 'node_modules', '.bin', 'partner-gateway-receipts');

    const packaged = await verify(bin, ['verify', join(scratch, 'receipt.jws'), '--proof', join(scratch, 'proof.json')], scratch);
    const fromRepository = await verify('npm', ['run', '-s', 'receipts', '--', 'verify', receipt, '--proof', join(scratch, 'proof.json')], process.cwd());
    const altered = await verify(bin, ['verify', receipt, '--proof', join(scratch, 'altered-proof.json')], scratch);
    const forgedReceipt = await verify(bin, ['verify', forged], scratch);
    // No keys named: nothing to check against, and nothing is fetched from the gateway under audit.
    const withoutKeys = await run(bin, ['verify', receipt], { cwd: scratch }).then(
      () => 0,
      (error: { code: number }) => error.code,
    );

    expect(packaged).toEqual({
      code: 0,
      out: { verified: true, proof: true, receipt: expect.objectContaining({ event_id: eventId, operation: 'customer.create' }) },
    });
    expect(fromRepository).toEqual(packaged);
    expect(altered).toEqual({ code: 1, out: { verified: false, failed: 'event_hash', message: expect.any(String) } });
    expect(forgedReceipt).toEqual({ code: 1, out: { verified: false, failed: 'signature', message: expect.any(String) } });
    expect(withoutKeys).toBe(2);
  });
});
