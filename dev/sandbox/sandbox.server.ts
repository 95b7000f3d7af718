import { createHash, createPublicKey, KeyObject, randomUUID, timingSafeEqual } from 'node:crypto';
import Fastify, { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { calculateJwkThumbprint, compactDecrypt, importJWK, JWK } from 'jose';
import { decimalOf, newEuroIban, newSterlingAccount, openingBalanceCents } from './sandbox-accounts';
import { FaultBook } from './sandbox-faults';
import { checkBankAccount, checkCustomer, FieldRefusal } from './sandbox-rules';
import { SandboxAccount, SandboxCustomer, SandboxState } from './sandbox-state';

export interface SandboxOptions {
  readonly bearerToken: string;
  readonly privateKey: KeyObject;
  readonly publicKeyPem: string;
  /** "Today" for the expiry rule; the system clock by default. */
  readonly now?: () => Date;
  /** Journal entries kept, newest last; older ones are dropped (benchmarks send millions). */
  readonly journalLimit?: number;
  /** Customers, accounts and references: in memory unless given (kept in a file). */
  readonly state?: SandboxState;
}

export const DEFAULT_JOURNAL_LIMIT = 10_000;

/** One line of the journal: what arrived and how it was answered — never personal data. */
export interface JournalEntry {
  readonly at: string;
  readonly method: string;
  readonly path: string;
  readonly request_id: string | null;
  /** The W3C Trace Context the call carried (traceparent), when the gateway traces. */
  readonly traceparent: string | null;
  reference: string | null;
  signature: 'valid' | 'invalid' | 'missing' | 'not-required';
  encrypted: boolean;
  status: number;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  409: 'Conflict',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** The provider's error envelope, as its interface document shows for 401. */
function envelope(status: number, details: string, message: string, fields?: FieldRefusal[]) {
  return {
    status,
    data: null,
    message: STATUS_TEXT[status] ?? 'Error',
    error: { id: randomUUID(), details, message, ...(fields ? { fields } : {}) },
  };
}

function created(data: Record<string, unknown>) {
  return { status: 201, message: 'Created', data, error: null };
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * A faithful stand-in for the provider, for development, tests and benchmarks: it checks the
 * bearer token and the Signature, decrypts the JWE, validates like the provider (expiry rule
 * included), refuses a reused reference, keeps customers and accounts (in memory, or in a file
 * that outlives a restart: SandboxState), journals what it received, and injects faults on demand.
 */
export async function createSandboxServer(options: SandboxOptions): Promise<FastifyInstance> {
  const now = options.now ?? (() => new Date());
  const journalLimit = options.journalLimit ?? DEFAULT_JOURNAL_LIMIT;
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  const decryptionKey = await importJWK(options.privateKey.export({ format: 'jwk' }) as JWK, 'RSA-OAEP-256');
  const expectedKid = await calculateJwkThumbprint(createPublicKey(options.publicKeyPem).export({ format: 'jwk' }), 'sha256');
  const faults = new FaultBook();
  const journal: JournalEntry[] = [];
  const state = options.state ?? SandboxState.inMemory();
  const journalOf = new WeakMap<FastifyRequest, JournalEntry>();
  const answerLatencyOf = new WeakMap<FastifyRequest, number>();

  const signatureOf = (reference: string) =>
    createHash('sha256')
      .update(options.publicKeyPem.trim() + reference, 'utf8')
      .digest('hex');

  app.addHook('onRequest', async (request, reply) => {
    // The control routes are not journaled (decided on the matched route); the journal records the
    // path as the gateway sent it, since what was sent is what the journal is for.
    if (request.routeOptions.url?.startsWith('/__sandbox')) return;
    const path = request.originalUrl.split('?')[0];
    const entry: JournalEntry = {
      at: new Date().toISOString(),
      method: request.method,
      path,
      request_id: typeof request.headers['x-request-id'] === 'string' ? request.headers['x-request-id'] : null,
      traceparent: typeof request.headers.traceparent === 'string' ? request.headers.traceparent : null,
      reference: null,
      signature: request.method === 'POST' ? 'missing' : 'not-required',
      encrypted: false,
      status: 0,
    };
    journal.push(entry);
    if (journal.length > journalLimit) journal.splice(0, journal.length - journalLimit);
    journalOf.set(request, entry);

    const effect = faults.effectFor(request.method, path);
    if (effect.latencyMs > 0) await new Promise((r) => setTimeout(r, effect.latencyMs));
    if (effect.kind === 'none' && effect.answerLatencyMs) answerLatencyOf.set(request, effect.answerLatencyMs);
    if (effect.kind === 'drop') {
      entry.status = -1;
      request.raw.socket.destroy();
      return reply.hijack();
    }
    if (effect.kind === 'garbage') {
      entry.status = 200;
      return reply.status(200).header('content-type', 'text/html').send('<html><body>upstream proxy error</body></html>');
    }
    if (effect.kind === 'status') {
      if (effect.retryAfter !== undefined) void reply.header('retry-after', String(effect.retryAfter));
      return reply.status(effect.status).send(envelope(effect.status, 'Injected fault', 'The sandbox was told to fail this request'));
    }

    const authorization = request.headers.authorization ?? '';
    if (!sameText(authorization, `Bearer ${options.bearerToken}`)) {
      return reply.status(401).send(envelope(401, 'The token is invalid or expired', 'The supplied token is invalid or expired'));
    }
  });

  app.addHook('onSend', async (request, reply) => {
    const entry = journalOf.get(request);
    if (entry && entry.status === 0) entry.status = reply.statusCode;
    const answerLatency = answerLatencyOf.get(request);
    if (answerLatency) await new Promise((r) => setTimeout(r, answerLatency));
  });

  /** Decrypts (when sealed) and checks the Signature of a POST body; answers for it when it fails. */
  async function openBody(request: FastifyRequest, reply: FastifyReply): Promise<Record<string, unknown> | undefined> {
    const entry = journalOf.get(request)!;
    const raw = request.body as Record<string, unknown> | null;
    if (!raw || typeof raw !== 'object') {
      await reply.status(400).send(envelope(400, 'The body must be a JSON object', 'Invalid request body'));
      return undefined;
    }
    let body = raw;
    if (typeof raw.data === 'string') {
      entry.encrypted = true;
      try {
        const { plaintext, protectedHeader } = await compactDecrypt(raw.data, decryptionKey, {
          keyManagementAlgorithms: ['RSA-OAEP-256'],
          contentEncryptionAlgorithms: ['A256GCM'],
        });
        if (protectedHeader.kid !== undefined && protectedHeader.kid !== expectedKid) throw new Error('unknown kid');
        body = JSON.parse(new TextDecoder().decode(plaintext)) as Record<string, unknown>;
      } catch {
        await reply.status(400).send(envelope(400, 'The payload could not be decrypted with the account key', 'Invalid encrypted payload'));
        return undefined;
      }
      if (!body || typeof body !== 'object' || Array.isArray(body)) {
        await reply.status(400).send(envelope(400, 'The decrypted payload must be a JSON object', 'Invalid encrypted payload'));
        return undefined;
      }
    }
    const reference = typeof body.reference === 'string' ? body.reference : '';
    entry.reference = reference || null;
    const signature = request.headers.signature;
    if (typeof signature !== 'string' || !sameText(signature.toLowerCase(), signatureOf(reference))) {
      entry.signature = typeof signature === 'string' ? 'invalid' : 'missing';
      await reply.status(401).send(envelope(401, 'The signature does not match the payload', 'The request signature is invalid'));
      return undefined;
    }
    entry.signature = 'valid';
    return body;
  }

  async function refuse(reply: FastifyReply, problems: FieldRefusal[]) {
    return reply.status(400).send(envelope(400, problems.map((p) => p.message).join('; '), 'Validation failed', problems));
  }

  function isNew(reference: string, reply: FastifyReply): boolean {
    if (!state.isNewReference(reference)) {
      void reply.status(409).send(envelope(409, 'This reference has already been used', 'Duplicate reference'));
      return false;
    }
    return true;
  }

  app.post('/api/v1/customer', async (request, reply) => {
    const body = await openBody(request, reply);
    if (!body) return reply;
    const problems = checkCustomer(body, now());
    if (problems.length > 0) return refuse(reply, problems);
    const reference = body.reference as string;
    if (!isNew(reference, reply)) return reply;
    const customer: SandboxCustomer = { id: randomUUID(), reference, createdAt: now().toISOString() };
    state.addCustomer(customer);
    return reply.status(201).send(created({ id: customer.id, reference, created_at: customer.createdAt }));
  });

  // A customer's balance in one currency: the sum of its accounts' in it (each starts at its own opening balance). Asked for a
  // currency it has no account in, or for none, it answers as a provider that ignores the parameter would: its first account's
  // currency, or EUR 0.00 with no account at all.
  app.get<{ Params: { id: string }; Querystring: { currency?: string } }>('/api/v1/customer/balance/:id', async (request, reply) => {
    const { id } = request.params;
    if (!/^[0-9a-f-]{36}$/i.test(id)) return reply.status(400).send(envelope(400, 'The customer id must be a UUID', 'Invalid customer id'));
    if (!state.customers.has(id)) return reply.status(404).send(envelope(404, 'No customer with this id', 'Customer not found'));
    const accounts = [...state.accounts.values()].filter((account) => account.customer_id === id);
    const asked = accounts.filter((account) => account.currency === request.query.currency);
    const shown = asked.length > 0 ? asked : accounts.filter((account) => account.currency === accounts[0]?.currency);
    const cents = shown.reduce((sum, account) => sum + openingBalanceCents(account.id), 0);
    const balance = decimalOf(cents);
    return {
      status: 200,
      message: 'OK',
      data: { customer_id: id, currency: shown[0]?.currency ?? 'EUR', available: balance, current: balance, as_of: now().toISOString() },
      error: null,
    };
  });

  const openAccount = async (request: FastifyRequest, reply: FastifyReply) => {
    const body = await openBody(request, reply);
    if (!body) return reply;
    const problems = checkBankAccount(body, now());
    if (problems.length > 0) return refuse(reply, problems);
    if (!state.customers.has(body.customer_id as string)) return reply.status(404).send(envelope(404, 'No customer with this id', 'Customer not found'));
    const reference = body.reference as string;
    if (!isNew(reference, reply)) return reply;
    const account: SandboxAccount = {
      id: randomUUID(),
      customer_id: body.customer_id,
      currency: body.currency,
      reference,
      status: 'active',
      ...(body.currency === 'EUR'
        ? { iban: newEuroIban() }
        : (({ sortCode, accountNumber }) => ({ sort_code: sortCode, account_number: accountNumber }))(newSterlingAccount())),
    };
    state.addAccount(account);
    return reply.status(201).send(created(account));
  };
  app.post('/payments/banks/account', openAccount);
  app.post('/api/v1/payments/banks/account', openAccount);

  app.get('/__sandbox/public-key', async (_request, reply) => reply.header('content-type', 'application/x-pem-file').send(options.publicKeyPem + '\n'));
  app.get('/__sandbox/requests', () => Promise.resolve({ requests: journal }));
  app.delete('/__sandbox/requests', async (_request, reply) => {
    journal.length = 0;
    return reply.status(204).send();
  });
  app.get('/__sandbox/faults', () => Promise.resolve({ faults: faults.list().map(({ pattern: _pattern, ...fault }) => fault) }));
  app.post('/__sandbox/faults', async (request, reply) => {
    const result = faults.add(request.body);
    if (Array.isArray(result)) return reply.status(400).send({ problems: result });
    const { pattern: _pattern, ...fault } = result;
    return reply.status(201).send(fault);
  });
  app.delete('/__sandbox/faults', async (_request, reply) => {
    faults.clear();
    return reply.status(204).send();
  });

  return app;
}
