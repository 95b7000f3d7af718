import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every file path of the README's Tests tables, as a pattern (`*` within one name). */
function documentedPaths(): string[] {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Tests'), readme.indexOf('## Layout'));
  return [...section.matchAll(/`((?:src|test)\/[^`]+)`/g)].map(([, path]) => path);
}

function matches(pattern: string): string[] {
  const parts = pattern.replace(/\/$/, '').split('/');
  let found = [''];
  for (const part of parts) {
    const regex = new RegExp(
      `^${part
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*/g, '.*')
        .replace(/\*/g, '[^/]*')}$`,
    );
    found = found.flatMap((dir) => {
      if (part === '**') return [dir];
      try {
        return readdirSync(join(process.cwd(), dir))
          .filter((name) => regex.test(name))
          .map((name) => (dir ? `${dir}/${name}` : name));
      } catch {
        return [];
      }
    });
  }
  return found;
}

describe('README: the Tests tables', () => {
  it('when every path the tables name is looked for, then each names files that exist', () => {
    const paths = documentedPaths();

    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((path) => !path.includes('**') && matches(path).length === 0)).toEqual([]);
  });
});
