// Two yardsticks for the gateway, both NestJS on Fastify with the project's own dependencies,
// both taking the partner's own requests (the same paths, bodies and bearer token as the gateway):
//
//   MODE=passthrough  one controller that forwards the call to the provider with undici: no auth,
//                     no validation, no audit. What the framework itself costs.
//   MODE=naive        the same, plus the durable work written the obvious way: the token looked
//                     up in api_clients on every request, audit events INSERTed one by one in
//                     autocommit, and for a bank account the idempotency claim and its result,
//                     on a pg Pool of 10. What a straightforward NestJS service doing the
//                     gateway's durable work costs.
//
// A bank account is sealed (JWE) and signed by both, with the gateway's own cipher and signer, so
// that the provider accepts it: that work belongs to the call, not to the gateway's overhead.
// Plain JavaScript: decorators are applied as the functions they are.
import 'reflect-metadata';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Body, Controller, Get, Headers, HttpException, Ip, Module, Param, Post, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import pg from 'pg';
import { Agent, request } from 'undici';
import { dist } from './support.mjs';

const { MODE, PORT, UPSTREAM_BASE_URL, UPSTREAM_BEARER_TOKEN, UPSTREAM_PUBLIC_KEY, DATABASE_URL } = process.env;
const naive = MODE === 'naive';
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 128 });
const pool = naive ? new pg.Pool({ connectionString: DATABASE_URL, max: 10 }) : undefined;

const { readUpstreamPublicKey } = dist('config/upstream-public-key.js');
const { JwePayloadCipher } = dist('upstream/payload-cipher.js');
const { RequestSigner } = dist('upstream/request-signer.js');
const key = readUpstreamPublicKey(readFileSync(UPSTREAM_PUBLIC_KEY, 'utf8'));
const cipher = new JwePayloadCipher(key.key);
const signer = new RequestSigner(key.pem);
const providerHeaders = { authorization: `Bearer ${UPSTREAM_BEARER_TOKEN}`, accept: 'application/json' };

async function provider(method, path, body, extraHeaders = {}) {
  const answer = await request(`${UPSTREAM_BASE_URL}${path}`, {
    method,
    headers: { ...providerHeaders, ...extraHeaders, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    dispatcher: agent,
  });
  const json = await answer.body.json();
  if (answer.statusCode >= 400) throw new HttpException(json, answer.statusCode);
  return json.data ?? json;
}

async function clientOf(authorization) {
  const token = /^Bearer (\S+)$/i.exec(authorization ?? '')?.[1];
  if (!token) throw new HttpException({ message: 'unauthorised' }, 401);
  const hash = createHash('sha256').update(token).digest('hex');
  const { rows } = await pool.query('SELECT id, name, tenant, revoked_at, expires_at FROM api_clients WHERE token_hash = $1', [hash]);
  const client = rows[0];
  if (!client || client.revoked_at || (client.expires_at && client.expires_at <= new Date())) throw new HttpException({ message: 'unauthorised' }, 401);
  return client;
}

const AUDIT_SQL =
  'INSERT INTO audit_events (id, request_id, client_id, client_name, tenant, operation, phase, http_method, route, reference, customer_id, currency, http_status, latency_ms, source_ip) ' +
  'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)';

function audit(client, { operation, phase, method, route, reference = null, customerId, currency = null, status = null, started, ip }) {
  const latency = status === null ? null : Date.now() - started;
  return pool.query(AUDIT_SQL, [
    randomUUID(),
    randomUUID(),
    client.id,
    client.name,
    client.tenant,
    operation,
    phase,
    method,
    route,
    reference,
    customerId,
    currency,
    status,
    latency,
    ip,
  ]);
}

class PartnerController {
  async balance(id, authorization, ip) {
    const started = Date.now();
    const client = naive ? await clientOf(authorization) : undefined;
    const data = await provider('GET', `/api/v1/customer/balance/${id}`);
    if (naive)
      await audit(client, {
        operation: 'balance.read',
        phase: 'succeeded',
        method: 'GET',
        route: '/api/v1/customers/:customerId/balance',
        customerId: id,
        status: 200,
        started,
        ip,
      });
    return { status: 200, message: 'OK', data, error: null };
  }

  async bankAccount(body, authorization, ip, reply) {
    const started = Date.now();
    const route = '/api/v1/bank-accounts';
    const common = {
      operation: 'bank_account.create',
      method: 'POST',
      route,
      reference: body.reference,
      customerId: body.customer_id,
      currency: body.currency,
      started,
      ip,
    };
    const client = naive ? await clientOf(authorization) : undefined;
    if (naive) {
      const fingerprint = createHash('sha256').update(JSON.stringify(body)).digest('hex');
      const now = new Date();
      const claimed = await pool.query(
        `INSERT INTO idempotency_keys (client_id, reference, operation, fingerprint, state, locked_until, created_at, expires_at)
         VALUES ($1, $2, 'bank_account.create', $3, 'in_flight', $4, $5, $6) ON CONFLICT (reference) DO NOTHING RETURNING reference`,
        [client.id, body.reference, fingerprint, new Date(now.getTime() + 60_000), now, new Date(now.getTime() + 86_400_000)],
      );
      if (claimed.rowCount !== 1) throw new HttpException({ message: 'reference in use' }, 409);
      await audit(client, { ...common, phase: 'attempted' });
    }
    const data = await provider('POST', '/payments/banks/account', await cipher.seal(body), { signature: signer.sign(body.reference) });
    const result = { status: 201, message: 'Created', data, error: null };
    if (naive) {
      await pool.query(`UPDATE idempotency_keys SET state = 'completed', result = $2::jsonb, locked_until = NULL WHERE reference = $1`, [
        body.reference,
        JSON.stringify(result),
      ]);
      await audit(client, { ...common, phase: 'succeeded', status: 201 });
    }
    reply.status(201);
    return result;
  }
}

const method = (name) => [PartnerController.prototype, name, Object.getOwnPropertyDescriptor(PartnerController.prototype, name)];
Get('customers/:id/balance')(...method('balance'));
Post('bank-accounts')(...method('bankAccount'));
Param('id')(PartnerController.prototype, 'balance', 0);
Headers('authorization')(PartnerController.prototype, 'balance', 1);
Ip()(PartnerController.prototype, 'balance', 2);
Body()(PartnerController.prototype, 'bankAccount', 0);
Headers('authorization')(PartnerController.prototype, 'bankAccount', 1);
Ip()(PartnerController.prototype, 'bankAccount', 2);
Res({ passthrough: true })(PartnerController.prototype, 'bankAccount', 3);
Controller('api/v1')(PartnerController);

class YardstickModule {}
Module({ controllers: [PartnerController] })(YardstickModule);

const app = await NestFactory.create(YardstickModule, new FastifyAdapter({ logger: false }), { logger: ['error'] });
await app.listen(Number(PORT ?? 0), '127.0.0.1');
process.stdout.write(`${naive ? 'naive NestJS app' : 'NestJS pass-through'} listening on ${app.getHttpServer().address().port}\n`);
process.once(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => pool?.end())
      .then(() => process.exit(0)),
);
