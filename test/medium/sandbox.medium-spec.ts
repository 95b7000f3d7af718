import { constants, createCipheriv, createHash, createPublicKey, publicEncrypt, randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSandboxKeys } from '../../dev/sandbox/sandbox-keys';
import { RunningSandbox, startSandbox } from '../../dev/sandbox/sandbox.runner';
import { buildBankAccountRequest, monthsFromToday } from '../support/builders';
import { journal } from '../support/sandbox';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A compact JWE built with node:crypto only — an implementation independent of the gateway's. */
function jweWithNodeCrypto(publicKeyPem: string, payload: unknown, header: Record<string, unknown> = {}): string {
  const protectedHeader = Buffer.from(JSON.stringify({ alg: 'RSA-OAEP-256', enc: 'A256GCM', ...header })).toString('base64url');
  const cek = randomBytes(32);
  const iv = randomBytes(12);
  const encryptedKey = publicEncrypt({ key: createPublicKey(publicKeyPem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, cek);
  const cipher = createCipheriv('aes-256-gcm', cek, iv);
  cipher.setAAD(Buffer.from(protectedHeader, 'ascii'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
  return [protectedHeader, encryptedKey, iv, ciphertext, cipher.getAuthTag()].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

describe('sandbox provider', () => {
  const keys = generateSandboxKeys();
  let sandbox: RunningSandbox;

  const signature = (reference: string) =>
    createHash('sha256')
      .update(keys.publicKeyPem + reference)
      .digest('hex');

  async function post(path: string, body: unknown, headers: Record<string, string> = {}, target = sandbox) {
    const response = await fetch(`${target.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.bearerToken}`, ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  }

  function customerPayload(reference = randomUUID()) {
    return { reference, first_name: 'Grace', last_name: 'Hopper', email: 'grace.hopper@example.com', phone_number: '+15555550123' };
  }

  async function createCustomer(target = sandbox): Promise<string> {
    const payload = customerPayload();
    const response = await post(
      '/api/v1/customer',
      { data: jweWithNodeCrypto(keys.publicKeyPem, payload) },
      { signature: signature(payload.reference) },
      target,
    );
    return response.body.data.id as string;
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, keys });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it.each([
    ['missing', undefined],
    ['wrong', 'Bearer sbx_wrong'],
    ['of another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
  ])('when the token is %s, then 401 with the provider envelope, field by field', async (_, authorization) => {
    const response = await fetch(`${sandbox.baseUrl}/api/v1/customer/balance/${randomUUID()}`, { headers: authorization ? { authorization } : {} });
    const body = (await response.json()) as Record<string, any>;

    expect(response.status).toBe(401);
    expect(Object.keys(body).sort()).toEqual(['data', 'error', 'message', 'status']);
    expect(body.status).toBe(401);
    expect(body.data).toBeNull();
    expect(typeof body.message).toBe('string');
    expect(Object.keys(body.error).sort()).toEqual(['details', 'id', 'message']);
    expect(body.error.id).toMatch(UUID);
    expect(body.error.details).toBe('The token is invalid or expired');
    expect(body.error.message).toBe('The supplied token is invalid or expired');
  });

  it('when a JWE made by another implementation arrives with a valid signature, then the customer is created', async () => {
    const payload = customerPayload();

    const response = await post('/api/v1/customer', { data: jweWithNodeCrypto(keys.publicKeyPem, payload) }, { signature: signature(payload.reference) });

    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ id: expect.stringMatching(UUID), reference: payload.reference });
  });

  it('when the signature does not match the reference, then 401', async () => {
    const payload = customerPayload();

    const response = await post('/api/v1/customer', { data: jweWithNodeCrypto(keys.publicKeyPem, payload) }, { signature: signature(randomUUID()) });

    expect(response.status).toBe(401);
    expect(response.body.error.message).toBe('The request signature is invalid');
  });

  it('when the signature is missing, then 401', async () => {
    const response = await post('/api/v1/customer', customerPayload());

    expect(response.status).toBe(401);
  });

  it('when the JWE was sealed for another key or is corrupt, then 400', async () => {
    const payload = customerPayload();
    const otherKey = generateSandboxKeys().publicKeyPem;

    const forOtherKey = await post('/api/v1/customer', { data: jweWithNodeCrypto(otherKey, payload) }, { signature: signature(payload.reference) });
    const corrupt = await post('/api/v1/customer', { data: 'a.b.c.d.e' }, { signature: signature(payload.reference) });

    expect(forOtherKey.status).toBe(400);
    expect(corrupt.status).toBe(400);
  });

  it('when a reference is used twice, then the second is refused with 409', async () => {
    const payload = customerPayload();
    const send = () => post('/api/v1/customer', { data: jweWithNodeCrypto(keys.publicKeyPem, payload) }, { signature: signature(payload.reference) });

    expect((await send()).status).toBe(201);
    expect((await send()).status).toBe(409);
  });

  it('when a bank account expires in less than a month, then 400 naming the earliest accepted date', async () => {
    const customerId = await createCustomer();
    const today = new Date();
    const soon = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 3)).toISOString().slice(0, 10);
    const payload = {
      customer_id: customerId,
      currency: 'GBP',
      phone_number: '+447700900123',
      reference: randomUUID(),
      document_type: 'passport',
      document_number: 'X1',
      issued_country_code: 'GB',
      issued_by: 'HMPO',
      issued_date: '2020-01-01',
      expiration_date: soon,
      country: 'GB',
      zip_code: 'SW1A 1AA',
      street: '1 Road',
      date_of_birth: '1990-01-01',
    };

    const tooSoon = await post('/payments/banks/account', { data: jweWithNodeCrypto(keys.publicKeyPem, payload) }, { signature: signature(payload.reference) });
    const later = { ...payload, reference: randomUUID(), expiration_date: monthsFromToday(3) };
    const accepted = await post('/payments/banks/account', { data: jweWithNodeCrypto(keys.publicKeyPem, later) }, { signature: signature(later.reference) });

    expect(tooSoon.status).toBe(400);
    expect(tooSoon.body.error.fields).toEqual([expect.objectContaining({ field: 'expiration_date', message: expect.stringMatching(/or later\)$/) })]);
    expect(accepted.status).toBe(201);
    expect(accepted.body.data).toMatchObject({ sort_code: expect.stringMatching(/^\d{2}-\d{2}-\d{2}$/), account_number: expect.stringMatching(/^\d{8}$/) });
  });

  it('when requests arrive, then the journal keeps method, path, reference and status but no personal data', async () => {
    await createCustomer();

    const text = JSON.stringify(await journal(sandbox));

    expect(text).toContain('/api/v1/customer');
    for (const personal of ['Grace', 'Hopper', 'grace.hopper@example.com', '+15555550123']) expect(text).not.toContain(personal);
  });

  it('when the public key is fetched, then it is the PEM the sandbox decrypts for', async () => {
    const response = await fetch(`${sandbox.baseUrl}/__sandbox/public-key`);

    expect(response.status).toBe(200);
    expect((await response.text()).trim()).toBe(keys.publicKeyPem);
  });

  it('when a fault is malformed, then it is refused with the problems named', async () => {
    const response = await fetch(`${sandbox.baseUrl}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 42, error_rate: 3, colour: 'red' }),
    });
    const body = (await response.json()) as { problems: string[] };

    expect(response.status).toBe(400);
    expect(body.problems).toEqual(expect.arrayContaining(['colour is not a fault setting', 'status must be an HTTP status', 'error_rate must be 0..1']));
  });

  it('when a fault has a count, then it applies that many times and then stops', async () => {
    await fetch(`${sandbox.baseUrl}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/balance/', status: 503, count: 2 }),
    });
    const read = async () =>
      (await fetch(`${sandbox.baseUrl}/api/v1/customer/balance/${randomUUID()}`, { headers: { authorization: `Bearer ${sandbox.bearerToken}` } })).status;

    expect([await read(), await read(), await read()]).toEqual([503, 503, 404]);
  });

  it('when more requests arrive than the journal keeps, then the oldest entries are dropped', async () => {
    const small = await startSandbox({ port: 0, keys, journalLimit: 3 });
    try {
      for (let i = 0; i < 5; i++) {
        await fetch(`${small.baseUrl}/api/v1/customer/balance/${randomUUID()}`, { headers: { 'x-request-id': `req-${i}` } });
      }

      const kept = await journal(small);

      expect(kept.map((e) => e.request_id)).toEqual(['req-2', 'req-3', 'req-4']);
    } finally {
      await small.close();
    }
  });

  describe('kept in a state file (DATA_DIR/sandbox/state.jsonl), as `npm start` and `npm run sandbox` keep it', () => {
    const balanceOf = async (target: RunningSandbox, id: string) =>
      (await fetch(`${target.baseUrl}/api/v1/customer/balance/${id}`, { headers: { authorization: `Bearer ${target.bearerToken}` } })).status;

    async function openAccount(target: RunningSandbox, customerId: string, reference: string = randomUUID()) {
      const payload = buildBankAccountRequest({ customer_id: customerId, reference });
      return post('/payments/banks/account', { data: jweWithNodeCrypto(keys.publicKeyPem, payload) }, { signature: signature(reference) }, target);
    }

    it('when it is restarted on the same file, then its customers, accounts and references are still there', async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'pgw-sandbox-')), 'sandbox', 'state.jsonl');
      const first = await startSandbox({ port: 0, keys, stateFile: file });
      const customerId = await createCustomer(first);
      const account = await openAccount(first, customerId);
      await first.close();

      const second = await startSandbox({ port: 0, keys, stateFile: file });
      try {
        expect(account.status).toBe(201);
        expect(await balanceOf(second, customerId)).toBe(200);
        expect((await openAccount(second, customerId)).status).toBe(201);
        // A reference the provider saw before the restart is still one it has seen.
        expect((await openAccount(second, customerId, account.body.data.reference as string)).status).toBe(409);
        expect(readFileSync(file, 'utf8')).not.toMatch(/C01X00T47|Invalidenstrasse|4915123456789/);
      } finally {
        await second.close();
      }
    });

    it('when the file is new, then the sandbox is fresh; when its last line was cut short by a crash, then the rest is kept', async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'pgw-sandbox-')), 'state.jsonl');
      const first = await startSandbox({ port: 0, keys, stateFile: file });
      const kept = await createCustomer(first);
      await first.close();
      appendFileSync(file, '{"customer":{"id":"5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44","refer');

      const again = await startSandbox({ port: 0, keys, stateFile: file });
      const fresh = await startSandbox({ port: 0, keys, stateFile: join(mkdtempSync(join(tmpdir(), 'pgw-sandbox-')), 'state.jsonl') });
      try {
        expect(await balanceOf(again, kept)).toBe(200);
        expect(await balanceOf(again, '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44')).toBe(404);
        expect(await balanceOf(fresh, kept)).toBe(404);
      } finally {
        await again.close();
        await fresh.close();
      }
    });
  });
});
