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
 * Whether an object in `text` (which must be valid JSON) has the same name twice, compared as JSON
 * reads them (`"a"` and `"\\u0061"` are the same name). JSON.parse keeps the last silently.
 */
export function hasDuplicateName(text: string): boolean {
  /** One entry per open object (its names so far) or array (null). */
  const open: (Set<string> | null)[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 123 /* { */) open.push(new Set());
    else if (char === 91 /* [ */) open.push(null);
    else if (char === 125 /* } */ || char === 93 /* ] */) open.pop();
    else if (char === 34 /* " */) {
      const start = i;
      let escaped = false;
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) {
        if (text.charCodeAt(i) === 92 /* \ */) {
          escaped = true;
          i++;
        }
      }
      const names = open[open.length - 1];
      if (!names) continue;
      // A string in an object is a name when a colon follows it.
      let next = i + 1;
      while (
        next < text.length &&
        (text.charCodeAt(next) === 32 || text.charCodeAt(next) === 9 || text.charCodeAt(next) === 10 || text.charCodeAt(next) === 13)
      )
        next++;
      if (text.charCodeAt(next) !== 58 /* : */) continue;
      const name = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i);
      if (names.has(name)) return true;
      names.add(name);
    }
  }
  return false;
}

/**
 * Parses a JSON body: bounded depth, each name once per object, and no key that reaches a prototype (`__proto__`, or
 * `constructor.prototype`), which is refused like any field the endpoint does not accept.
 */
export function parseJsonBody(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (text.length === 0) throw new MalformedJson('empty');
  if (jsonDepthExceeds(text, maxDepth)) throw new JsonTooDeep(maxDepth);
  try {
    const value: unknown = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    if (hasDuplicateName(text)) throw new MalformedJson('duplicate');
    return value;
  } catch (error) {
    if (error instanceof MalformedJson) throw error;
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
