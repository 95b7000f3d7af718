import 'reflect-metadata';
import { readConfigOrExit } from '../../config/load-config';
import { setUpCommandLineProcess } from '../../database/cli/open-database';
import { runAuditPurge } from './audit-purge.command';

readConfigOrExit();
setUpCommandLineProcess();
runAuditPurge(process.env, { out: (line) => process.stdout.write(line + '\n') }).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`audit:purge: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
