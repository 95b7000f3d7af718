import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The commands whose stdout is JSON lines, for jq or a script: npm's banner must not come first. */
const JSON_COMMANDS = /^npm run (?!-s )(clients|customers|audit:verify|audit:reconcile|audit:purge)\b/;
const PAGES = ['README.md', 'docs/operations.md'];

function codeLines(page: string): string[] {
  const text = readFileSync(join(process.cwd(), page), 'utf8');
  return [...text.matchAll(/```(?:bash)?\n([\s\S]*?)```/g)].flatMap(([, block]) => block.split('\n').map((line) => line.trim()));
}

describe('the commands the README and operations.md show', () => {
  it.each(PAGES)('when %s shows a command that prints JSON lines, then it runs it with npm run -s', (page) => {
    const lines = codeLines(page);

    expect(lines.filter((line) => /^npm run /.test(line)).length).toBeGreaterThanOrEqual(2);
    expect(lines.filter((line) => JSON_COMMANDS.test(line))).toEqual([]);
  });

  it('when the README opens a bank account, then the body carries a reference and says a retry is safe', () => {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const example = readme.slice(readme.indexOf('# An EUR account'), readme.indexOf('"date_of_birth":"1990-12-10"}'));

    expect(example).toMatch(/"reference":"[0-9a-f-]{36}"/);
    expect(example).toMatch(/retry/i);
  });
});
