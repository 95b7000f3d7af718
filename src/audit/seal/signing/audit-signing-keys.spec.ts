import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSigningKeyFile, keyIdOf, loadSigningKey, NoAuditSigningKey } from './audit-signing-keys';

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
