import type { FastifyRequest } from 'fastify';
import type { EdgeStage } from '../../common/http/edge-stage';
import { contextOf } from '../../common/http/request-context';
import { RoleNotAllowed } from '../domain/auth.errors';
import { callerOf } from './access.guard';

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

/** The admin path a request falls under, on the route the router matched and the canonical path (never the request line as spelled). */
export function adminPathOf(paths: readonly AdminPath[], request: FastifyRequest): AdminPath | undefined {
  const path = contextOf(request.raw).target.path;
  return paths.find((candidate) => covers(candidate.prefix, request.routeOptions.url) || covers(candidate.prefix, path));
}

/**
 * Routes served outside the controllers (Swagger UI, the OpenAPI document, metrics) that need an
 * admin client: the caller the identify stage found must be one. Refusals are the usual envelope
 * (401 or 403) through the one error filter, with the challenge that makes a browser prompt.
 */
export function adminPathsStage(paths: readonly AdminPath[]): EdgeStage {
  if (paths.length === 0) return { name: 'admin-paths' };
  return {
    name: 'admin-paths',
    onRequest: (request, reply) => {
      const context = contextOf(request.raw);
      const guarded = adminPathOf(paths, request);
      if (!guarded) return;
      try {
        // A browser session is an end user's: on these paths it counts for nothing, so that an admin whose browser also holds one still gets the prompt.
        // Basic is what a browser's prompt sends, and only where it is asked for (/docs).
        const ignored = context.identity?.presentedAs === 'session' || (context.identity?.presentedAs === 'basic' && guarded.challenge !== 'basic');
        const identity = ignored ? undefined : context.identity;
        const client = callerOf(identity);
        if (client.role !== 'admin') throw new RoleNotAllowed(['admin']);
      } catch (refusal) {
        if (guarded.challenge === 'basic') void reply.header('www-authenticate', 'Basic realm="Partner gateway admin", charset="UTF-8"');
        else void reply.header('www-authenticate', 'Bearer realm="Partner gateway admin"');
        throw refusal;
      }
    },
  };
}
