import { join } from 'node:path';
import { readConfigOrExit } from '../config/load-config';
import { createBaseLogger } from '../common/runtime/logging';
import { startSandbox } from './sandbox.runner';

/** `npm run sandbox`: the provider's stand-in on its own, for a gateway started in live mode. */
async function main(): Promise<void> {
  const config = readConfigOrExit();
  const log = createBaseLogger(config.LOG_LEVEL);
  const sandbox = await startSandbox({
    port: config.SANDBOX_PORT,
    host: config.SANDBOX_HOST,
    keys: { dir: join(config.DATA_DIR, 'sandbox') },
    bearerToken: config.SANDBOX_BEARER_TOKEN,
  });
  log.info({ url: sandbox.baseUrl }, 'Sandbox provider listening');
  process.stdout.write(
    [
      '',
      'Point a gateway at this sandbox with:',
      `  UPSTREAM_BASE_URL=${sandbox.baseUrl}`,
      `  UPSTREAM_BEARER_TOKEN=${sandbox.bearerToken}`,
      `  UPSTREAM_PUBLIC_KEY=${join(config.DATA_DIR, 'sandbox', 'public.pem')}`,
      '',
    ].join('\n') + '\n',
  );
  const stop = () => {
    void sandbox.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main();
