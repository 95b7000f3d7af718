import { loadEnvFile } from '../../config/load-config';
import { runUsersCli } from './users.command';

loadEnvFile();
runUsersCli(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`users: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
