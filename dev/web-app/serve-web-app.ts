import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { WEB_APP_PATH } from '../identity-provider/dev-identity-provider';

/** The reference web app's files (dev/web-app/ in the repository): plain HTML, CSS and JavaScript. */
const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** Where the files are: dev/web-app/ in the service's own directory (npm start runs there, as the image does). */
export function webAppDir(): string {
  return join(process.cwd(), 'dev', 'web-app');
}

/**
 * Serves the reference web app at /app/ (sandbox mode): the page a partner's front-end developer
 * copies, logging in through the development OpenID provider with the gateway's browser session.
 * Read once at start; same origin as the API, so the CSP (script-src 'self') stands.
 */
export function serveWebApp(fastify: FastifyInstance, dir = webAppDir()): void {
  for (const [name, type] of Object.entries(FILES)) {
    const body = readFileSync(join(dir, name));
    const path = name === 'index.html' ? WEB_APP_PATH : `${WEB_APP_PATH}${name}`;
    fastify.get(path, (_request, reply) => reply.header('content-type', type).header('cache-control', 'no-cache').send(body));
  }
  fastify.get(WEB_APP_PATH.slice(0, -1), (_request, reply) => reply.code(308).header('location', WEB_APP_PATH).send());
}
