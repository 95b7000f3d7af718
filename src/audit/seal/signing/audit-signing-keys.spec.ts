import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactSign, compactVerify } from 'jose';
import { RECEIPT_TYPE, ReceiptClaims } from '../domain/receipt';
import { defaultSigningKeyFile, Ed25519CheckpointSigner, keyIdOf, loadSigningKey, NoAuditSigningKey } from './audit-signing-keys';

describe('loadSigningKey', () => {
  const emptyDataDir = () => mkdtempSync(join(tmpdir(), 'audit-keys-'));

  it('when a command finds no AUDIT_SIGNING_KEY and no key under DATA_DIR, then it refuses and makes none', () => {
    const dir = emptyDataDir();

    expect(() => loadSigningKey({ DATA_DIR: dir }, { make: false })).toThrow(NoAuditSigningKey);
    expect(() => loadSigningKey({ DATA_DIR: dir }, { make: false })).toThrow(/No audit signing key: AUDIT_SIGNING_KEY is not set/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('when the service finds none in development, then it makes one under DATA_DIR, which a command then uses', () => {
    const dir = emptyDataDir();

    const made = loadSigningKey({ DATA_DIR: dir }, { make: true });
    const read = loadSigningKey({ DATA_DIR: dir }, { make: false });

    expect(made.generated).toBe(defaultSigningKeyFile(dir));
    expect(existsSync(defaultSigningKeyFile(dir))).toBe(true);
    expect(read.generated).toBeUndefined();
    expect(keyIdOf(read.key)).toBe(keyIdOf(made.key));
  });
});

describe('Ed25519CheckpointSigner.signReceipt', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const signer = new Ed25519CheckpointSigner(privateKey);
  const claimsOf = (overrides: Partial<ReceiptClaims>): ReceiptClaims => ({
    v: 1,
    event_id: '0b5a3f5e-3f0c-4c55-9a2c-7f1d2b9a7c11',
    event_hash: 'ab'.repeat(32),
    occurred_at: '2026-11-28T07:39:55.297Z',
    request_id: 'req-1',
    operation: 'bank_account.create',
    outcome: 'succeeded',
    http_status: 201,
    reference: 'ref-1',
    customer_id: null,
    ...overrides,
  });
  const variants: ReceiptClaims[] = [
    claimsOf({}),
    claimsOf({ http_status: null, reference: null, outcome: 'failed' }),
    claimsOf({ reference: 'Zoë 𝔘 "quoted" \\ \u0000 \ud800', request_id: '</script>' }),
    claimsOf({ customer_id: 'c'.repeat(300) }),
  ];

  it.each(variants)('when a receipt is signed, then it is byte for byte what jose signs with the same key and header (%#)', async (claims) => {
    const fromJose = await new CompactSign(Buffer.from(JSON.stringify(claims), 'utf8'))
      .setProtectedHeader({ alg: 'EdDSA', kid: signer.keyId, typ: RECEIPT_TYPE })
      .sign(privateKey);

    await expect(signer.signReceipt(claims)).resolves.toBe(fromJose);
  });

  it('when jose verifies a receipt with the public key, then it finds the claims and the header', async () => {
    const claims = variants[2];

    const verified = await compactVerify(await signer.signReceipt(claims), publicKey, { algorithms: ['EdDSA'] });

    expect(JSON.parse(Buffer.from(verified.payload).toString('utf8'))).toEqual(JSON.parse(JSON.stringify(claims)));
    expect(verified.protectedHeader).toEqual({ alg: 'EdDSA', kid: signer.keyId, typ: RECEIPT_TYPE });
  });

  it('when the claims cannot be made JSON, then signReceipt rejects rather than throws', async () => {
    const signing = signer.signReceipt({ ...variants[0], http_status: 1n as unknown as number });

    await expect(signing).rejects.toThrow(TypeError);
  });

  it('when another key verifies a receipt, then jose refuses it', async () => {
    const other = generateKeyPairSync('ed25519').publicKey;

    await expect(compactVerify(await signer.signReceipt(variants[0]), other)).rejects.toThrow();
  });
});
