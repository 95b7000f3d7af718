import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { DevIdentityProvider, startDevIdentityProvider } from '../../dev/identity-provider/dev-identity-provider';

const USERS = join(process.cwd(), 'dist', 'dev', 'cli', 'users.cli.js');

/** Runs `npm run users --` with `input` on its standard input (closed at once when none). */
async function users(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [USERS, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** `npm run users -- token`: an end user's token from the OpenID provider, the password never on the command line. */
describe('npm run users -- token', () => {
  let idp: DevIdentityProvider;

  beforeAll(async () => {
    idp = await startDevIdentityProvider({ port: 0, audience: 'urn:partner-gateway' });
  });
  afterAll(async () => {
    await idp.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: '/nonexistent',
    OIDC_ISSUER: idp.issuer,
    ...extra,
  });
  const subjectOf = (stdout: string) => decodeJwt(stdout.trim()).sub;

  it('when the password comes on standard input (--password-stdin), then that password logs the user in', async () => {
    const right = await users(['token', '--user', 'demo', '--password-stdin'], env(), 'demo\n');
    // A wrong one is refused: the name (the password when none is given) is not what was used.
    const wrong = await users(['token', '--user', 'demo', '--password-stdin'], env(), 'not-demo\n');
    const none = await users(['token', '--user', 'demo', '--password-stdin'], env(), '');

    expect({ code: right.code, stderr: right.stderr }).toEqual({ code: 0, stderr: '' });
    expect(subjectOf(right.stdout)).toBe('demo');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('wrong user or password');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--password-stdin read no password');
  }, 60_000);

  it('when the password comes in USER_PASSWORD, then that password logs the user in', async () => {
    const right = await users(['token', '--user', 'alex'], env({ USER_PASSWORD: 'alex' }));
    const wrong = await users(['token', '--user', 'alex'], env({ USER_PASSWORD: 'not-alex' }));

    expect({ code: right.code, stderr: right.stderr }).toEqual({ code: 0, stderr: '' });
    expect(subjectOf(right.stdout)).toBe('alex');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('wrong user or password');
  }, 60_000);

  it('when the password is given on the command line, then it is refused with the reason and the ways that keep it off, and nothing logs in', async () => {
    const result = await users(['token', '--user', 'demo', '--password', 'demo'], env());
    const help = await users(['help'], env());

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--password is refused: every user of the machine reads a command line (ps)');
    expect(result.stderr).toContain('--password-stdin or USER_PASSWORD');
    expect(help.stdout).toContain('token --user NAME [--password-stdin]');
    expect(help.stdout).toContain('USER_PASSWORD');
    expect(help.stdout).not.toContain('--password P');
  });
});
