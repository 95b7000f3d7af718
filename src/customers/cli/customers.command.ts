import { parseArgs } from 'node:util';
import { isUuid } from '../../common/domain/identifiers';
import { CliIo, Command, runCommandLine, UsageError } from '../../database/cli/command-line';
import { CustomerTenantEntity } from '../persistence/customer-tenant.entity';
import { TypeOrmCustomerOwnershipRepository } from '../persistence/typeorm-customer-ownership.repository';

const USAGE = `Usage: npm run customers -- <command> [options]

  link --tenant T --customer-id ID
         Gives a customer created elsewhere (not through this service) to tenant T, so that T's
         clients may read its balance and open accounts for it. Refused if another tenant has it.
`;

const link: Command = async (args, { database, io }) => {
  const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, 'customer-id': { type: 'string' } }, strict: true });
  const customerId = values['customer-id'];
  if (!values.tenant || values.tenant.length > 64) throw new UsageError('--tenant is required (at most 64 characters)');
  if (!customerId || !isUuid(customerId)) throw new UsageError('--customer-id must be the customer’s UUID');
  const ownership = new TypeOrmCustomerOwnershipRepository(database.dataSource.getRepository(CustomerTenantEntity));
  const owner = await ownership.assign(customerId.toLowerCase(), values.tenant, 'linked');
  if (owner !== values.tenant) {
    io.err(`Customer ${customerId} already belongs to another tenant; nothing changed.`);
    return 1;
  }
  io.out(JSON.stringify({ customer_id: customerId.toLowerCase(), tenant: owner }));
  return 0;
};

/** Runs the customers CLI; returns the exit code. */
export function runCustomersCli(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  return runCommandLine({ usage: USAGE, commands: { link }, entities: [CustomerTenantEntity] }, argv, env, io);
}
