import 'reflect-metadata';
import { runAsProcess } from '../../database/cli/command-line';
import { runClientsCli } from './clients.command';

runAsProcess('clients', runClientsCli);
