import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Agent, errors, request } from 'undici';
import { DestinationPolicy } from '../domain/destination-policy';
import { TransportAnswer, WebhookTransport } from '../domain/delivery.ports';
import { ATTEMPT_TIMEOUT_MS } from '../domain/delivery-schedule';

/** How much of an answer is read: the log keeps 1 KiB of it, and the rest is let go. */
const MOST_READ_BYTES = 4096;

/** The addresses a name resolves to, refused (as an error the attempt records) when the policy refuses any of them. */
function guardedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4);
      const refused = addresses.find((found) => policy.isRefusedAddress(found.address));
      if (refused) {
        return callback(Object.assign(new Error(`${hostname} resolves to an address deliveries may not reach`), { code: 'WEBHOOK_ADDRESS_REFUSED' }), '', 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** One POST per attempt, through one agent whose every connection is checked against the policy as it is made. */
@Injectable()
export class UndiciWebhookTransport extends WebhookTransport implements OnApplicationShutdown {
  private readonly agent: Agent;

  constructor(private readonly policy: DestinationPolicy) {
    super();
    this.agent = new Agent({ connect: { lookup: guardedLookup(policy), timeout: ATTEMPT_TIMEOUT_MS }, connections: 16 });
  }

  async post(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<TransportAnswer> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    const host = URL.parse(url)?.hostname.replace(/^\[|\]$/g, '') ?? '';
    // An address in the URL itself is never looked up: checked here instead.
    if (isIP(host) && this.policy.isRefusedAddress(host)) return { latencyMs: 0, failure: 'refused_address' };
    try {
      const answer = await request(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'partner-gateway-webhooks/1' },
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        headersTimeout: ATTEMPT_TIMEOUT_MS,
        bodyTimeout: ATTEMPT_TIMEOUT_MS,
      });
      const response = await readSome(answer.body);
      const retryAfter = answer.headers['retry-after'];
      return {
        status: answer.statusCode,
        response,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : (retryAfter ?? null),
        latencyMs: latency(),
        ...(answer.statusCode >= 300 && answer.statusCode < 400 ? { failure: 'redirect' } : {}),
      };
    } catch (error) {
      return { latencyMs: latency(), failure: failureOf(error) };
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }
}

/** The first bytes of an answer, as text (bytes that are not UTF-8 replaced, NUL dropped: PostgreSQL text takes neither). */
async function readSome(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MOST_READ_BYTES) break;
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, MOST_READ_BYTES).toString('utf8').replaceAll(String.fromCharCode(0), '');
}

function failureOf(error: unknown): string {
  const code = (error as { code?: string; cause?: { code?: string } }).code ?? (error as { cause?: { code?: string } }).cause?.code;
  if (code === 'WEBHOOK_ADDRESS_REFUSED') return 'refused_address';
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError || error instanceof errors.ConnectTimeoutError) return 'timeout';
  if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') return 'timeout';
  return 'connection';
}
