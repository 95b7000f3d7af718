import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// `npm run clients`, `npm run audit:*`, `npm start` build first only when a source changed
// (scripts/build-if-changed.mjs). Tried on a project of two files, so that the suite's own dist/
// is never rebuilt under the tests that run it.
const SCRIPT = join(process.cwd(), 'scripts', 'build-if-changed.mjs');

describe('scripts/build-if-changed.mjs', () => {
  let project: string;

  const run = () => spawnSync(process.execPath, [SCRIPT], { cwd: project, encoding: 'utf8' });
  const built = () => readFileSync(join(project, 'dist', 'src', 'main.js'), 'utf8');

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'pgw-build-'));
    mkdirSync(join(project, 'src'));
    symlinkSync(join(process.cwd(), 'node_modules'), join(project, 'node_modules'));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'commonjs', target: 'ES2022', outDir: 'dist', rootDir: '.', types: [] } }),
    );
    writeFileSync(join(project, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', include: ['src'] }));
    writeFileSync(join(project, 'src', 'main.ts'), 'export const answer: number = 1;\n');
  });

  it('when nothing was built yet, then it builds, and says so on stderr only', () => {
    const result = run();

    expect(result.status).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^Built dist\/ in \d+\.\d s/);
    expect(built()).toContain('answer = 1');
  });

  it('when nothing changed since, then it does nothing at all', () => {
    const before = statSync(join(project, 'dist', '.built-at')).mtimeMs;

    const result = run();

    expect(result).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(statSync(join(project, 'dist', '.built-at')).mtimeMs).toBe(before);
  });

  it('when a source changes, or a new one appears, then it builds again', () => {
    const later = new Date(Date.now() + 5_000);
    writeFileSync(join(project, 'src', 'main.ts'), 'export const answer: number = 2;\n');
    utimesSync(join(project, 'src', 'main.ts'), later, later);

    const changed = run();
    writeFileSync(join(project, 'src', 'other.ts'), 'export const other = 3;\n');
    const later2 = new Date(Date.now() + 10_000);
    utimesSync(join(project, 'src'), later2, later2);
    const added = run();

    expect(changed.stderr).toMatch(/^Built dist\//);
    expect(built()).toContain('answer = 2');
    expect(added.stderr).toMatch(/^Built dist\//);
    expect(readFileSync(join(project, 'dist', 'src', 'other.js'), 'utf8')).toContain('other = 3');
  });

  it('when a source is deleted, then its compiled files go too (a fresh clone would not have them)', () => {
    rmSync(join(project, 'src', 'other.ts'));
    const later = new Date(Date.now() + 15_000);
    utimesSync(join(project, 'src'), later, later);

    const result = run();

    expect(result.status).toBe(0);
    expect(existsSync(join(project, 'dist', 'src', 'other.js'))).toBe(false);
    expect(built()).toContain('answer = 2');
  });

  it('when there is no src/ (the production image: dist/ and the scripts, no compiler), then it builds nothing and leaves dist/ as it is', () => {
    const image = mkdtempSync(join(tmpdir(), 'pgw-image-'));
    mkdirSync(join(image, 'dist', 'src'), { recursive: true });
    writeFileSync(join(image, 'dist', 'src', 'main.js'), 'exports.answer = 1;\n');
    writeFileSync(join(image, 'tsconfig.build.json'), '{}');

    const result = spawnSync(process.execPath, [SCRIPT], { cwd: image, encoding: 'utf8' });

    expect(result).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(readdirSync(join(image, 'dist'))).toEqual(['src']);
    expect(readFileSync(join(image, 'dist', 'src', 'main.js'), 'utf8')).toBe('exports.answer = 1;\n');
  });

  it('when the build fails, then it exits non-zero and leaves no mark of a build', () => {
    const before = statSync(join(project, 'dist', '.built-at')).mtimeMs;
    writeFileSync(join(project, 'src', 'main.ts'), 'export const answer: number = "not a number";\n');
    const later = new Date(Date.now() + 20_000);
    utimesSync(join(project, 'src', 'main.ts'), later, later);

    const result = run();

    expect(result.status).not.toBe(0);
    expect(statSync(join(project, 'dist', '.built-at')).mtimeMs).toBe(before);
  });
});
