import 'reflect-metadata';
import { runAsProcess } from '../../../database/cli/command-line';
import { runCustomersCli } from './customers.command';

runAsProcess('customers', runCustomersCli);
