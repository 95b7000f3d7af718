import { DomainError } from '../domain/domain-error';
import { MalformedJson } from './edge.errors';
import { decodeJsonText, MAX_JSON_DEPTH, parseJsonBody, scanJsonText } from './json-body';

const jsonDepthExceeds = (text: string, max: number) => scanJsonText(text, max).tooDeep;
const hasDuplicateName = (text: string) => scanJsonText(text, MAX_JSON_DEPTH).duplicateName;

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
    return undefined;
  } catch (error) {
    return error instanceof DomainError ? error.code : `not a DomainError: ${String(error)}`;
  }
}

describe('scanJsonText: depth', () => {
  it('when nesting is exactly the limit, then it is within; one more is over', () => {
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
  });

  it('when brackets sit inside strings, escaped quotes included, then they do not count', () => {
    const text = JSON.stringify({ a: `\\"${'['.repeat(100)}`, b: '{{{{' });

    expect(jsonDepthExceeds(text, 2)).toBe(false);
  });

  it('when objects and arrays mix, then both count', () => {
    expect(jsonDepthExceeds('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(jsonDepthExceeds('{"a":[{"b":[1]}]}', 4)).toBe(false);
  });
});

describe(parseJsonBody.name, () => {
  it('when the body is ordinary JSON, then it is parsed', () => {
    expect(parseJsonBody('{"currency":"EUR","n":[1,2]}')).toEqual({ currency: 'EUR', n: [1, 2] });
  });

  it('when the body nests 100,000 deep, then it is refused before anything walks it', () => {
    expect(codeOf(() => parseJsonBody(nested(100_000)))).toBe('REQUEST.JSON_TOO_DEEP');
  });

  it.each([
    ['{"__proto__":{"admin":true}}', '__proto__'],
    ['{"a":{"constructor":{"prototype":{"admin":true}}}}', 'constructor'],
  ])('when the body is %s, then it is refused naming %s as a field that is not accepted', (text, field) => {
    let error: unknown;
    try {
      parseJsonBody(text);
    } catch (caught) {
      error = caught;
    }

    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('REQUEST.VALIDATION_FAILED');
    expect((error as DomainError).fields).toEqual([{ field, message: `${field} is not an accepted field` }]);
  });

  it.each([
    ['', 'REQUEST.MALFORMED_JSON'],
    ['{"a":', 'REQUEST.MALFORMED_JSON'],
    ['{a:1}', 'REQUEST.MALFORMED_JSON'],
  ])('when the body is %j, then it is malformed JSON', (text, code) => {
    expect(codeOf(() => parseJsonBody(text))).toBe(code);
  });
});

describe('scanJsonText: a name twice', () => {
  it.each([
    ['{"a":1,"a":2}', 'the same name twice'],
    ['{"a":1,"\\u0061":2}', 'the same name, once escaped'],
    ['{"x":{"b":1, "b" :2}}', 'in a nested object, with spaces before the colon'],
    ['[{"a":1},{"b":{"c":[1,{"d":1,"d":1}]}}]', 'deep inside arrays'],
  ])('when %s (%s), then it is found', (text) => {
    expect(hasDuplicateName(text)).toBe(true);
  });

  it.each([
    ['{"a":1,"b":{"a":2}}', 'the same name in two objects'],
    ['{"a":"a","b":["a","a"]}', 'values and array items equal to a name'],
    ['{"a":"x\\":\\"a","b":1}', 'a colon and quotes inside a string value'],
    ['[{"a":1},{"a":1}]', 'two objects in an array with the same names'],
    ['"a"', 'a lone string'],
  ])('when %s (%s), then there is none', (text) => {
    expect(hasDuplicateName(text)).toBe(false);
  });

  it('when a body repeats a field, then parsing refuses it as malformed JSON (a proxy and this service could read different values)', () => {
    expect(() => parseJsonBody('{"reference":"a","reference":"b"}')).toThrow(MalformedJson);
    expect(parseJsonBody('{"reference":"a","nested":{"reference":"b"}}')).toEqual({ reference: 'a', nested: { reference: 'b' } });
  });
});

describe(decodeJsonText.name, () => {
  const bytes = (...parts: (string | number[])[]) =>
    Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));

  it.each([
    ['Latin-1 é in a name ("Jos\\xE9")', bytes('{"first_name":"Jos', [0xe9], '"}')],
    ['a UTF-16 byte-order mark (\\xFF\\xFE)', bytes([0xff, 0xfe], '{}')],
    ['a lone continuation byte (\\x80)', bytes('{"a":"', [0x80], '"}')],
    ['an overlong slash (\\xC0\\xAF)', bytes('{"a":"', [0xc0, 0xaf], '"}')],
    ['a surrogate encoded as UTF-8 (\\xED\\xA0\\x80)', bytes('{"a":"', [0xed, 0xa0, 0x80], '"}')],
    ['a code point past U+10FFFF (\\xF4\\x90\\x80\\x80)', bytes('{"a":"', [0xf4, 0x90, 0x80, 0x80], '"}')],
    ['a sequence cut short at the end', bytes('{"a":"', [0xe2, 0x82])],
  ])('when the body holds %s, then it is refused as malformed JSON and says UTF-8', (_what, body) => {
    let error: unknown;
    try {
      decodeJsonText(body);
    } catch (caught) {
      error = caught;
    }

    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('REQUEST.MALFORMED_JSON');
    expect((error as DomainError).details).toContain('UTF-8');
  });

  it('when the body is UTF-8 from every plane, then it is the same text', () => {
    const text = '{"a":"José 王小明 😀 \u{10FFFD}"}';

    expect(decodeJsonText(Buffer.from(text, 'utf8'))).toBe(text);
  });

  it('when the body starts with a UTF-8 byte-order mark, then the mark is ignored', () => {
    expect(decodeJsonText(bytes([0xef, 0xbb, 0xbf], '{}'))).toBe('{}');
  });
});
