import { DomainError } from '../domain/domain-error';
import { jsonDepthExceeds, MAX_JSON_DEPTH, parseJsonBody } from './json-body';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
    return undefined;
  } catch (error) {
    return error instanceof DomainError ? error.code : `not a DomainError: ${String(error)}`;
  }
}

describe(jsonDepthExceeds.name, () => {
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
