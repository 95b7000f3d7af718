import { loadEnvFile } from '../../src/config/load-config';
import { runAsProcess } from '../../src/database/cli/command-line';
import { runUsersCli } from './users.command';

loadEnvFile();
runAsProcess('users', runUsersCli);
