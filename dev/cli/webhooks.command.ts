import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { CliIo } from '../../src/database/cli/command-line';
import { EVENT_TYPE_NAMES } from '../../src/partner-api/events/domain/event-types';

export const WEBHOOKS_USAGE = `Usage: npm run -s webhooks -- listen --forward-to URL [--gateway URL] [--types a,b] [--secret whsec_…]

Forwards your tenant's events, as they happen, to a server on your machine, signed as the gateway
signs its webhooks (Standard Webhooks, v1), as Stripe's CLI does: your handler runs unchanged,
checked with the secret printed at start. Nothing is registered at the gateway: its events are
read with GET /api/v1/events (your partner token in PARTNER_TOKEN), so it works against any
deployment, a local one included.
  --forward-to   where each event is POSTed (http://localhost:4242/hook)
  --gateway      the gateway's base URL (default GATEWAY_URL, else http://127.0.0.1:3000)
  --types        only these event types, comma-separated (${EVENT_TYPE_NAMES.join(', ')})
  --secret       the whsec_ secret to sign with (default: a new one, printed)
Runs until interrupted. Exit 2 when called wrongly.`;

/** How often the gateway is asked for new events. */
const POLL_MS = 1000;

interface ListedEvent {
  id: string;
  type: string;
  created_at: string;
}

/** `npm run webhooks -- listen`: forwards events until `signal` aborts; returns the exit code. */
export async function runWebhooksCli(argv: string[], env: NodeJS.ProcessEnv, io: CliIo, signal?: AbortSignal): Promise<number> {
  let options: { forwardTo: URL; gateway: string; types?: string[]; secret: string; token: string };
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'forward-to': { type: 'string' },
        gateway: { type: 'string' },
        types: { type: 'string' },
        secret: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
    if (values.help) {
      io.out(WEBHOOKS_USAGE);
      return 0;
    }
    if (positionals[0] !== 'listen' || positionals.length !== 1)
      throw new Error(positionals[0] ? `Unknown command '${positionals[0]}'` : 'A command is required');
    const forwardTo = URL.parse(values['forward-to'] ?? '');
    if (!forwardTo || !/^https?:$/.test(forwardTo.protocol)) throw new Error('--forward-to must be an http(s) URL');
    const types = values.types?.split(',');
    const unknown = types?.filter((type) => !(EVENT_TYPE_NAMES as string[]).includes(type));
    if (unknown?.length) throw new Error(`--types: unknown event types: ${unknown.join(', ')}`);
    if (values.secret !== undefined && !/^whsec_[A-Za-z0-9+/=]{24,}$/.test(values.secret)) throw new Error('--secret must be a whsec_ secret');
    const token = env.PARTNER_TOKEN;
    if (!token) throw new Error('PARTNER_TOKEN must hold a partner token of your tenant');
    options = {
      forwardTo,
      gateway: (values.gateway ?? env.GATEWAY_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, ''),
      types,
      secret: values.secret ?? `whsec_${randomBytes(24).toString('base64')}`,
      token,
    };
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${WEBHOOKS_USAGE}`);
    return 2;
  }
  const signer = new Webhook(options.secret);
  io.out(`Forwarding events to ${options.forwardTo.href}; verify them with ${options.secret}`);
  // From now on: an event written before the start is not forwarded (GET /api/v1/events has them).
  let since = new Date().toISOString();
  const seen = new Set<string>();
  while (!signal?.aborted) {
    try {
      const query = new URLSearchParams({ from: since, limit: '100', ...(options.types ? { type: options.types.join(',') } : {}) });
      const answer = await fetch(`${options.gateway}/api/v1/events?${query.toString()}`, { headers: { authorization: `Bearer ${options.token}` }, signal });
      const body = (await answer.json()) as { data: { events: ListedEvent[] } | null; error: { code?: string; message: string } | null };
      if (!answer.ok || !body.data) {
        io.err(`The gateway answered ${answer.status}: ${body.error?.code ?? ''} ${body.error?.message ?? ''}`.trim());
      } else {
        // Oldest first, each once.
        for (const event of [...body.data.events].reverse()) {
          if (seen.has(event.id)) continue;
          seen.add(event.id);
          await forward(event, options.forwardTo, signer, io, signal);
          if (Date.parse(event.created_at) >= Date.parse(since)) since = event.created_at;
        }
      }
    } catch (error) {
      if (signal?.aborted) break;
      io.err(`Could not read the gateway's events: ${(error as Error).message}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS).unref());
  }
  return 0;
}

async function forward(event: ListedEvent, to: URL, signer: Webhook, io: CliIo, signal?: AbortSignal): Promise<void> {
  const timestamp = new Date();
  const body = JSON.stringify({ ...event, timestamp: timestamp.toISOString() });
  try {
    const answer = await fetch(to, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signer.sign(event.id, timestamp, body),
      },
      body,
      redirect: 'manual',
      signal,
    });
    io.out(`${event.created_at} ${event.type} ${event.id} -> ${answer.status}`);
  } catch (error) {
    io.out(`${event.created_at} ${event.type} ${event.id} -> not delivered: ${(error as Error).message}`);
  }
}
