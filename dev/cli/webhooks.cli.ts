import { loadEnvFile } from '../../src/config/load-config';
import { runAsProcess } from '../../src/database/cli/command-line';
import { runWebhooksCli } from './webhooks.command';

loadEnvFile();
runAsProcess('webhooks', (argv, env, io) => {
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  return runWebhooksCli(argv, env, io, stop.signal);
});
