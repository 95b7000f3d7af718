import { join } from 'node:path';
import { readConfigOrExit } from '../../src/config/load-config';
import { DevelopmentEnvironment } from '../development.environment';
import { createBaseLogger } from '../../src/common/runtime/logging';
import { liveModeStart, RunningSandbox, SandboxPortTaken, sandboxFilesUnder, startSandbox } from './sandbox.runner';

/** `npm run sandbox`: the provider's stand-in on its own, for a gateway started in live mode. */
async function main(): Promise<void> {
  const config = readConfigOrExit({ sandbox: true, also: [DevelopmentEnvironment] });
  const log = createBaseLogger(config.LOG_LEVEL);
  const files = sandboxFilesUnder(config.DATA_DIR);
  let sandbox: RunningSandbox;
  try {
    sandbox = await startSandbox({
      port: config.SANDBOX_PORT,
      host: config.SANDBOX_HOST,
      keys: { dir: files.keysDir },
      bearerToken: config.SANDBOX_BEARER_TOKEN,
      stateFile: files.stateFile,
    });
  } catch (error) {
    // A taken port is an everyday mistake: one line, no stack.
    if (error instanceof SandboxPortTaken) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  log.info({ url: sandbox.baseUrl, state: files.stateFile }, 'Sandbox provider listening');
  process.stdout.write(liveModeStart(sandbox.baseUrl, sandbox.bearerToken, join(files.keysDir, 'public.pem'), config.DATABASE_URL) + '\n');
  const stop = () => {
    void sandbox.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main();
