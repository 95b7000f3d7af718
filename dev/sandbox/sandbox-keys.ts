import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SandboxKeys {
  readonly privateKey: KeyObject;
  readonly publicKeyPem: string;
}

export function generateSandboxKeys(): SandboxKeys {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString().trim() };
}

/** The sandbox's RSA-2048 pair, generated once and kept under `dir` (private key mode 0600). */
export function loadOrCreateSandboxKeys(dir: string): SandboxKeys {
  const privatePath = join(dir, 'private.pem');
  const publicPath = join(dir, 'public.pem');
  if (existsSync(privatePath) && existsSync(publicPath)) {
    const privateKey = createPrivateKey(readFileSync(privatePath, 'utf8'));
    return { privateKey, publicKeyPem: createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString().trim() };
  }
  const keys = generateSandboxKeys();
  mkdirSync(dir, { recursive: true });
  writeFileSync(privatePath, keys.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(publicPath, keys.publicKeyPem + '\n');
  return keys;
}
