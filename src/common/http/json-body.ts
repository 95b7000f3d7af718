import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { RequestValidationFailed } from './validation';
import { JsonTooDeep, MalformedJson } from './edge.errors';
import { DomainError } from '../domain/domain-error';
import { targetOf } from './request-context';

/** Deeper bodies are refused before anything walks them: no request field nests past two levels. */
export const MAX_JSON_DEPTH = 32;

/** What one pass over a body's text finds before it is parsed. */
export interface JsonTextScan {
  /** Objects or arrays nest deeper than the limit (the scan stops there). */
  readonly tooDeep: boolean;
  /** An object has the same name twice, compared as JSON reads them (`"a"` and `"\\u0061"` are one name). */
  readonly duplicateName: boolean;
}

const isJsonSpace = (char: number) => char === 32 || char === 9 || char === 10 || char === 13;

/**
 * One pass over a body's text, before anything walks it: how deep it nests (brackets inside
 * strings do not count) and whether an object has a name twice (JSON.parse keeps the last one
 * silently). Made for valid JSON; on anything else its answer does not matter, as parsing refuses it.
 */
export function scanJsonText(text: string, maxDepth: number): JsonTextScan {
  /** One entry per open object (its names so far) or array (null). */
  const open: (Set<string> | null)[] = [];
  let duplicateName = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 123 /* { */ || char === 91 /* [ */) {
      if (open.length === maxDepth) return { tooDeep: true, duplicateName };
      open.push(char === 123 && !duplicateName ? new Set() : null);
    } else if (char === 125 /* } */ || char === 93 /* ] */) {
      open.pop();
    } else if (char === 34 /* " */) {
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
      while (next < text.length && isJsonSpace(text.charCodeAt(next))) next++;
      if (text.charCodeAt(next) !== 58 /* : */) continue;
      const name = escaped ? nameOf(text.slice(start, i + 1)) : text.slice(start + 1, i);
      if (name === undefined) continue;
      if (names.has(name)) duplicateName = true;
      else names.add(name);
    }
  }
  return { tooDeep: false, duplicateName };
}

/** An escaped name as JSON reads it; undefined when it is not a valid string literal (parsing will say so). */
function nameOf(literal: string): string | undefined {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return undefined;
  }
}

/**
 * Parses a JSON body: bounded depth, each name once per object, and no key that reaches a prototype (`__proto__`, or
 * `constructor.prototype`), which is refused like any field the endpoint does not accept.
 */
export function parseJsonBody(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (text.length === 0) throw new MalformedJson('empty');
  const scan = scanJsonText(text, maxDepth);
  if (scan.tooDeep) throw new JsonTooDeep(maxDepth);
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    if (!(error as Error).message.includes('forbidden prototype property')) throw new MalformedJson('syntax');
    // The library says the same for both keys: the one that still fails with __proto__ allowed is constructor.
    const field = reachesPrototypeThroughConstructor(text) ? 'constructor' : '__proto__';
    throw new RequestValidationFailed([{ field, message: `${field} is not an accepted field` }]);
  }
  // Only a body that parsed: a broken one is refused as broken, whatever the scan saw in it.
  if (scan.duplicateName) throw new MalformedJson('duplicate');
  return value;
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

/**
 * Replaces Fastify's JSON parser (same library underneath) with parseJsonBody, on UTF-8 only, and
 * leaves JSON the only body read: without its text/plain parser, such a body is a 415.
 */
export function useJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('text/plain');
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

/**
 * Form bodies (application/x-www-form-urlencoded) on the given canonical paths only, as
 * URLSearchParams: an OpenID provider's back-channel logout posts one. Anywhere else a form is a
 * 415, as before.
 */
export function useFormBodyOn(fastify: FastifyInstance, paths: readonly string[], bodyLimit = 16_384): void {
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    if (!paths.includes(targetOf(request.raw).path)) {
      done(new DomainError('REQUEST.UNSUPPORTED_MEDIA_TYPE'), undefined);
      return;
    }
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(new DomainError('REQUEST.VALIDATION_FAILED', { details: 'The form is not UTF-8' }), undefined);
      return;
    }
    done(null, new URLSearchParams(text));
  });
}
