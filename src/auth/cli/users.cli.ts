import { loadEnvFile } from '../../config/load-config';
import { runAsProcess } from '../../database/cli/command-line';
import { runUsersCli } from './users.command';

loadEnvFile();
runAsProcess('users', runUsersCli);
