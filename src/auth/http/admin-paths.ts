import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EdgeStage } from '../../common/http/edge-stage';
import { ApiClientsService } from '../domain/api-clients.service';
import { RoleNotAllowed } from '../domain/auth.errors';
import { targetOf } from '../../common/http/request-context';
import { presentedToken } from '../domain/callers.service';

/** The admin token from `Bearer <token>`, or the password of `Basic` (what a browser prompts for). */
export function adminCredential(header: string | string[] | undefined): string | undefined {
  const presented = presentedToken(header);
  if (presented?.scheme === 'bearer') return presented.token;
  if (presented !== undefined || typeof header !== 'string') return undefined;
  const basic = /^Basic[ ]+([A-Za-z0-9+/=]+)[ ]*$/i.exec(header);
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : undefined;
}

export interface AdminPath {
  /** The path itself and everything under it (`/docs` covers `/docs/`, `/docs-json`, `/docs/x.js`). */
  readonly prefix: string;
  /** `basic` makes a browser prompt (any user name, the admin token as password). */
  readonly challenge: 'basic' | 'bearer';
}

function covers(prefix: string, path: string | undefined): boolean {
  if (path === undefined) return false;
  const lower = path.toLowerCase();
  return lower === prefix || lower.startsWith(`${prefix}/`) || lower.startsWith(`${prefix}-`);
}

/**
 * Routes served outside the controllers (Swagger UI, the OpenAPI document, metrics) that need an
 * admin client. Refusals are the usual envelope (401 or 403) through the one error filter.
 */
export function adminPathsStage(paths: readonly AdminPath[], clients: ApiClientsService): EdgeStage {
  if (paths.length === 0) return { name: 'admin-paths' };
  return {
    name: 'admin-paths',
    onRequest: (request, reply) => {
      // The route the router matched, and the canonical path: never the request line as spelled.
      const path = targetOf(request.raw).path;
      const guarded = paths.find((candidate) => covers(candidate.prefix, request.routeOptions.url) || covers(candidate.prefix, path));
      return guarded ? requireAdmin(guarded, clients, request, reply) : undefined;
    },
  };
}

async function requireAdmin(guarded: AdminPath, clients: ApiClientsService, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  try {
    const client = await clients.authenticate(adminCredential(request.headers.authorization));
    if (client.role !== 'admin') throw new RoleNotAllowed(['admin']);
  } catch (error) {
    if (guarded.challenge === 'basic') void reply.header('www-authenticate', 'Basic realm="Partner gateway admin", charset="UTF-8"');
    else void reply.header('www-authenticate', 'Bearer realm="Partner gateway admin"');
    throw error;
  }
}
