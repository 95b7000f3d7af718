#!/usr/bin/env node
// Run by docker-compose.yml's keys service before the gateway starts: makes the keys that production
// requires of the gateway (AUDIT_SIGNING_KEY, END_USER_PSEUDONYM_KEY, DATA_KEY) in the folder given (a named
// volume), each only when it is not there yet, so that they outlive the containers and never change
// under the data they sign or name. Readable by their owner (the image's node user) only.
//
// For compose on one machine. A real deployment brings its own keys, shared by every replica.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file names the gateway's environment points at (docker-compose.yml), and how each is made. */
const KEYS = {
  // Signs the audit checkpoints: an Ed25519 private key, PEM (PKCS #8), as openssl genpkey -algorithm ed25519 makes.
  'audit-signing-key.pem': () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }),
  // Keys end users' pseudonyms: 32 random bytes, base64, as openssl rand -base64 32 prints.
  'end-user-pseudonym.key': () => `${randomBytes(32).toString('base64')}\n`,
  // Seals partners' data at rest (bank accounts' identifiers, the answers kept to replay): 32 random bytes, base64.
  'data.key': () => `${randomBytes(32).toString('base64')}\n`,
};

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('Usage: node gateway-keys.mjs <folder>\n');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
for (const [name, make] of Object.entries(KEYS)) {
  const file = join(dir, name);
  if (existsSync(file)) {
    process.stdout.write(`${file}: kept\n`);
    continue;
  }
  writeFileSync(file, make(), { mode: 0o600, flag: 'wx' });
  process.stdout.write(`${file}: made\n`);
}
