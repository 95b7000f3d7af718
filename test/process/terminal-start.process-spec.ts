import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cleanEnv, clusterPid, removeDataDir, scratchDataDir, startInTerminal, Started, waitForOutput } from '../support/processes';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const MAIN = join(process.cwd(), 'dist', 'dev', 'main.js');
const run = promisify(execFile);
// Colours and the terminal's own control sequences, as a person never sees them.
const CONTROL = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]|\\r`, 'g');

/**
 * `npm start` at a terminal: a person reads the log, so it is human-readable, and the block with
 * the tokens stands out instead of following forty lines of framework chatter. (Piped, the same
 * start logs JSON lines: test/process/embedded-first-start.process-spec.ts reads them.)
 */
describe('the first start at a terminal', () => {
  let dataDir: string;
  let service: Started | undefined;

  beforeAll(() => {
    dataDir = scratchDataDir();
  });
  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    await removeDataDir(dataDir);
  });

  it('when stdout is a terminal, then the log is readable lines, not JSON, and the tokens come after a handful of them', async () => {
    service = startInTerminal(MAIN, cleanEnv({ DATA_DIR: dataDir, PORT: '0', SANDBOX_PORT: '0', DEV_OIDC_PORT: '0', DEV_STAFF_OIDC_PORT: '0', TERM: 'xterm' }));
    await waitForOutput(service, /Partner gateway listening/, 120_000);
    const lines = service
      .output()
      .replace(CONTROL, '')
      .split('\n')
      .filter((line) => line.trim() !== '');
    const banner = lines.findIndex((line) => line.includes('DEVELOPMENT CLIENT TOKENS'));

    expect(lines.filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
    expect(lines.find((line) => line.includes('SANDBOX MODE'))).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] WARN: SANDBOX MODE/);
    expect(banner).toBeGreaterThan(0);
    expect(banner).toBeLessThan(15);
    expect(lines.some((line) => line.includes('Mapped {'))).toBe(false);
  }, 180_000);

  it('when every command the tokens’ block prints is run as printed, in order, then each curl is answered 2xx', async () => {
    const block = service!.output().replace(CONTROL, '').split('DEVELOPMENT CLIENT TOKENS')[1].split('\n');
    const commands = block.map((line) => line.trim()).filter((line) => line.startsWith('curl ') || /^[A-Z]+=\$\(npm run /.test(line));
    // The shell a person runs them in reads the same settings as the service (.env): here, the ports it was given.
    const port = (what: string) => new URL(/(http:\/\/127\.0\.0\.1:\d+)/.exec(block.find((line) => line.includes(what))!)![1]).port;
    const env = cleanEnv({
      DATA_DIR: dataDir,
      DEV_OIDC_PORT: port('development OpenID provider at'),
      DEV_STAFF_OIDC_PORT: port('development staff provider at'),
    });
    const script = ['set -euo pipefail', ...commands.flatMap((command) => [command, ...(command.startsWith('curl ') ? ['echo'] : [])])].join('\n');

    const { stdout } = await run('bash', ['-c', script], { cwd: process.cwd(), env });
    const statuses = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { status: number }).status);

    expect(commands.filter((command) => command.startsWith('curl ')).length).toBe(4);
    expect(commands.some((command) => command.includes('audit-events') && command.includes('reason='))).toBe(true);
    expect(statuses).toEqual([200, 200, 200, 200]);
  }, 120_000);

  it('when Ctrl-C is pressed (SIGINT to the whole foreground process group), then the service seals, stops its PostgreSQL and exits 0, quietly', async () => {
    const postgres = clusterPid(dataDir)!;
    const before = service!.output().length;

    // ^C into the terminal: its line discipline sends SIGINT to every process of the foreground
    // group, as a person's Ctrl-C does. The embedded PostgreSQL runs in a group of its own.
    service!.child.stdin!.write('\x03');
    const code = await service!.exited;
    const said = service!.output().slice(before).replace(CONTROL, '');

    expect(code).toBe(0);
    expect(said).toMatch(/INFO: Stopped/);
    expect(said.split('\n').filter((line) => /WARN|ERROR|FATAL|57P03|shutting down \(|^\s+at /.test(line))).toEqual([]);
    expect(isRunning(postgres)).toBe(false);
  }, 60_000);
});
