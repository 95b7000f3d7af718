import { errorDocAnchor } from '../../src/common/http/error-docs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_ERROR_CODES, ErrorCode } from '../../src/common/domain/error-codes';
import { ERROR_MESSAGES, isCatalogued } from '../../src/common/domain/error-messages';
import { statusOfCode } from '../../src/common/http/error-envelope.filter';

interface Row {
  readonly code: string;
  readonly status: string;
  readonly meaning: string;
  readonly action: string;
  /** The row's anchor: where the request log's `doc_url` for the code points. */
  readonly anchor?: string;
}

/** The rows of docs/errors.md's table, as written. */
function documentedCodes(): Row[] {
  const page = readFileSync(join(process.cwd(), 'docs', 'errors.md'), 'utf8');
  return page
    .split('\n')
    .filter((line) => /^\| (<a id="[a-z-]+"><\/a>)?`[A-Z_.]+` \|/.test(line))
    .map((line) => {
      const [cell, status, meaning, action] = line
        .split('|')
        .slice(1, -1)
        .map((text) => text.trim());
      const [, anchor, code] = /^(?:<a id="([a-z-]+)"><\/a>)?`([A-Z_.]+)`$/.exec(cell)!;
      return { code, anchor, status, meaning, action };
    });
}

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } } }> }>;
}

describe('docs/errors.md and the service’s error codes', () => {
  const rows = documentedCodes();

  it('when the page’s table is read, then it lists every code the service gives, once, in the order of the code', () => {
    expect(rows.map((row) => row.code)).toEqual(ALL_ERROR_CODES);
  });

  it('when the request log links an error code to the page, then the code’s row carries that anchor', () => {
    expect(rows.map((row) => `${row.code} #${row.anchor}`)).toEqual(ALL_ERROR_CODES.map((code) => `${code} #${errorDocAnchor(code)}`));
  });

  it('when each row’s status is read, then it is the status the service answers that code with', () => {
    expect(rows.map((row) => `${row.code} ${row.status.split(' ')[0]}`)).toEqual(ALL_ERROR_CODES.map((code) => `${code} ${statusOfCode(code)}`));
  });

  it('when each row is read, then it says what the code means and whether to retry', () => {
    for (const row of rows) {
      expect({ code: row.code, meaning: row.meaning.length > 20, action: /^(Yes|No|Not for partners)\b/.test(row.action) }).toEqual({
        code: row.code,
        meaning: true,
        action: true,
      });
    }
  });

  it('when the checked-in OpenAPI document lists a response’s codes, then each is a documented code of that response’s status, and the 401 has none', () => {
    const document = JSON.parse(readFileSync(join(process.cwd(), 'openapi.json'), 'utf8')) as { paths: Record<string, Record<string, Operation>> };
    const listed = Object.values(document.paths).flatMap((operations) =>
      Object.values(operations).flatMap((operation) =>
        Object.entries(operation.responses).flatMap(([status, response]) =>
          (response.content?.['application/json']?.schema?.properties?.error?.properties?.code?.enum ?? []).map((code) => ({
            status: Number(status),
            code,
          })),
        ),
      ),
    );

    expect(listed.length).toBeGreaterThan(50);
    for (const { status, code } of listed) {
      expect({ code, status }).toEqual({ code, status: statusOfCode(code as never) });
    }
  });

  it('when the checked-in OpenAPI document shows an error example, then its message is the one the service says for that code (the catalogue)', () => {
    const document = JSON.parse(readFileSync(join(process.cwd(), 'openapi.json'), 'utf8')) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { example?: { error?: { code?: string; message?: string } } }> }> }>
      >;
    };
    const shown: string[] = [];
    for (const operations of Object.values(document.paths))
      for (const operation of Object.values(operations))
        for (const response of Object.values(operation.responses))
          for (const media of Object.values(response.content ?? {})) {
            const error = media.example?.error;
            const code = error?.code as ErrorCode | undefined;
            if (code && isCatalogued(code)) shown.push(`${code}: ${error?.message}`);
          }

    expect(shown.length).toBeGreaterThan(50);
    expect(shown.filter((line) => !Object.entries(ERROR_MESSAGES).some(([code, message]) => line === `${code}: ${message}`))).toEqual([]);
  });
});
