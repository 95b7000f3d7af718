import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../support/processes';

// clients/typescript's types are generated from openapi.json (`npm run client:generate`, which
// `npm run openapi:export` runs). When the API changes and the client was not regenerated, this says so.
const GENERATOR = join(process.cwd(), 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
const CHECKED_IN = join(process.cwd(), 'clients', 'typescript', 'src', 'schema.ts');

describe('clients/typescript', () => {
  it('when its types are generated again from the checked-in openapi.json, then they are exactly the checked-in ones', async () => {
    const target = join(mkdtempSync(join(tmpdir(), 'pgw-client-')), 'schema.ts');

    const result = await runProcess(GENERATOR, ['openapi.json', '-o', target], { PATH: process.env.PATH });

    expect(result.code).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(readFileSync(CHECKED_IN, 'utf8'));
  });

  it('when its error code type is read, then it lists every code of docs/errors.md (the 401’s too)', () => {
    const schema = readFileSync(CHECKED_IN, 'utf8');
    const documented = [...readFileSync(join(process.cwd(), 'docs', 'errors.md'), 'utf8').matchAll(/^\| (?:<a id="[a-z-]+"><\/a>)?`([A-Z_.]+)` \|/gm)].map(
      (m) => m[1],
    );

    const typed = [...(schema.match(/^\s+ErrorCode: (.*);$/m)?.[1] ?? '').matchAll(/"([A-Z_.]+)"/g)].map((m) => m[1]);

    expect(typed).toEqual(documented);
  });
});
