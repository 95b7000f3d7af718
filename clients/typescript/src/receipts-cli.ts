#!/usr/bin/env node
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type AuditKeySet, type InclusionProof, ReceiptVerificationError, verifyInclusion, verifyReceipt } from './receipts.js';

/**
 * `partner-gateway-receipts verify <receipt> [--proof <file>] --keys <file or https URL>`: checks a
 * receipt (the JWS, or a file holding it), and with --proof its inclusion proof (the answer of
 * `GET /api/v1/receipts/{event_id}`, as saved), against the audit keys (a saved copy of
 * `/.well-known/audit-keys.json`, or its https URL). With saved keys and proof, nothing is fetched.
 *
 * Prints one JSON line: `{"verified":true,...}` and exits 0, or `{"verified":false,"failed":...}`
 * and exits 1; a command it cannot run exits 2.
 */

const USAGE = 'usage: verify <receipt or file> [--proof <file>] --keys <file, or https URL>';

class UsageError extends Error {}

/**
 * The keys to check against: a file you saved from /.well-known/audit-keys.json (what pinning
 * means), or its URL over https (or http on this machine's loopback): fetched keys are only as
 * trustworthy as the connection that brought them.
 */
async function keysFrom(where: string | undefined): Promise<AuditKeySet> {
  if (!where) throw new UsageError(`no keys: ${USAGE}`);
  let text: string;
  if (/^https?:\/\//.test(where)) {
    const url = new URL(where);
    if (url.protocol !== 'https:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
      throw new UsageError(`${where}: keys are fetched over https only`);
    const answer = await fetch(url);
    if (!answer.ok) throw new UsageError(`${where} answered ${answer.status}`);
    text = await answer.text();
  } else {
    text = readFileSync(where, 'utf8');
  }
  const keys = JSON.parse(text) as AuditKeySet;
  if (!Array.isArray(keys?.keys)) throw new UsageError(`${where} is not a JWK Set`);
  return keys;
}

/** A saved answer, as the gateway sent it (its envelope) or its `data` alone. */
function proofFrom(file: string): InclusionProof {
  const saved = JSON.parse(readFileSync(file, 'utf8')) as { data?: InclusionProof } & Partial<InclusionProof>;
  const proof = (saved.data ?? saved) as InclusionProof;
  if (typeof proof?.event_id !== 'string' || !proof.checkpoint) throw new UsageError(`${file} is not an inclusion proof (GET /api/v1/receipts/{event_id})`);
  return proof;
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { proof: { type: 'string' }, keys: { type: 'string' } } });
  const [command, given] = positionals;
  if (command !== 'verify' || !given || positionals.length > 2) throw new UsageError(USAGE);
  const receipt = existsSync(given) ? readFileSync(given, 'utf8').trim() : given;
  const keys = await keysFrom(values.keys);
  try {
    const claims = await verifyReceipt(receipt, keys);
    if (values.proof !== undefined) await verifyInclusion(proofFrom(values.proof), keys, claims);
    console.log(JSON.stringify({ verified: true, proof: values.proof !== undefined, receipt: claims }));
    return 0;
  } catch (error) {
    if (!(error instanceof ReceiptVerificationError)) throw error;
    console.log(JSON.stringify({ verified: false, failed: error.failed, message: error.message }));
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof UsageError ? error.message : `verify could not run: ${(error as Error).message}`);
    process.exit(2);
  },
);
