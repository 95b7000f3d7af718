import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The commands whose stdout is JSON lines, for jq or a script: npm's banner must not come first. */
const JSON_COMMANDS = /^npm run (?!-s )(clients|customers|audit:verify|audit:reconcile|audit:purge)\b/;
const PAGES = ['README.md', 'docs/operations.md'];

/** The languages of the blocks that hold commands; a block with no language is read as commands too. */
const SHELL = new Set(['', 'bash', 'sh', 'shell', 'console']);

/** The lines of a page's shell blocks: each block runs from a fence at a line's start to the next, whatever its language. */
function shellLines(text: string): string[] {
  return [...text.matchAll(/^```([\w-]*)[^\n]*\n([\s\S]*?)^```/gm)]
    .filter(([, language]) => SHELL.has(language))
    .flatMap(([, , block]) => block.split('\n').map((line) => line.trim()));
}

function codeLines(page: string): string[] {
  return shellLines(readFileSync(join(process.cwd(), page), 'utf8'));
}

describe('the commands the README and operations.md show', () => {
  it.each(PAGES)('when %s shows a command that prints JSON lines, then it runs it with npm run -s', (page) => {
    const lines = codeLines(page);

    expect(lines.filter((line) => /^npm run /.test(line)).length).toBeGreaterThanOrEqual(2);
    expect(lines.filter((line) => JSON_COMMANDS.test(line))).toEqual([]);
  });

  it('when a page has a block in another language before its commands, then the commands after it are still read, and the block is not', () => {
    const page = [
      '```sql',
      "SELECT 'npm run clients -- list';",
      '```',
      '',
      '```bash',
      'npm run -s clients -- list',
      '```',
      '',
      '```',
      'npm run audit:verify',
      '```',
    ].join('\n');

    expect(shellLines(page)).toEqual(['npm run -s clients -- list', '', 'npm run audit:verify', '']);
  });

  it('when the README opens a bank account, then the body carries a reference and says a retry is safe', () => {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const example = readme.slice(readme.indexOf('# An EUR account'), readme.indexOf('"date_of_birth":"1990-12-10"}'));

    expect(example).toMatch(/"reference":"[0-9a-f-]{36}"/);
    expect(example).toMatch(/retry/i);
  });
});
