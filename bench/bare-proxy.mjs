// The yardstick: the least a proxy in front of the provider can cost here. Fastify receives the
// request, undici forwards it (method, path, headers, body) to the target and streams the answer
// back. No auth, no validation, no audit, no signing or encryption (the caller brings those).
import Fastify from 'fastify';
import { Agent, request } from 'undici';

const target = process.env.TARGET;
const port = Number(process.env.PORT ?? 0);
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 128 });
const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

app.all('/*', async (req, reply) => {
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
  const upstream = await request(`${target}${req.url}`, { method: req.method, headers, body: req.body ?? undefined, dispatcher: agent });
  reply.status(upstream.statusCode);
  for (const [name, value] of Object.entries(upstream.headers)) if (!HOP_BY_HOP.has(name)) reply.header(name, value);
  return reply.send(Buffer.from(await upstream.body.arrayBuffer()));
});

await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`bare proxy listening on ${app.server.address().port}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
