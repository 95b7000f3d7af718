import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { RequestValidationFailed } from './validation';
import { JsonTooDeep, MalformedJson } from './edge.errors';

/** Deeper bodies are refused before anything walks them: no request field nests past two levels. */
export const MAX_JSON_DEPTH = 32;

/** Whether `text` nests objects or arrays deeper than `max` (brackets inside strings do not count). */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 92 /* \ */) i++;
      else if (char === 34 /* " */) inString = false;
    } else if (char === 34) {
      inString = true;
    } else if (char === 123 /* { */ || char === 91 /* [ */) {
      if (++depth > max) return true;
    } else if (char === 125 /* } */ || char === 93 /* ] */) {
      depth--;
    }
  }
  return false;
}

/**
 * Parses a JSON body: bounded depth, and no key that reaches a prototype (`__proto__`, or
 * `constructor.prototype`), which is refused like any field the endpoint does not accept.
 */
export function parseJsonBody(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (text.length === 0) throw new MalformedJson('empty');
  if (jsonDepthExceeds(text, maxDepth)) throw new JsonTooDeep(maxDepth);
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    if (!(error as Error).message.includes('forbidden prototype property')) throw new MalformedJson('syntax');
    // The library says the same for both keys: the one that still fails with __proto__ allowed is constructor.
    const field = reachesPrototypeThroughConstructor(text) ? 'constructor' : '__proto__';
    throw new RequestValidationFailed([{ field, message: `${field} is not an accepted field` }]);
  }
}

function reachesPrototypeThroughConstructor(text: string): boolean {
  try {
    secureJson.parse(text, undefined, { protoAction: 'ignore', constructorAction: 'error' });
    return false;
  } catch {
    return true;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body's bytes as text: UTF-8 only (RFC 8259 §8.1), a leading byte-order mark ignored. */
export function decodeJsonText(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new MalformedJson('encoding');
  }
}

/** Replaces Fastify's JSON parser (same library underneath) with parseJsonBody, on UTF-8 only. */
export function useJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    let value: unknown;
    try {
      value = parseJsonBody(decodeJsonText(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    done(null, value);
  });
}
