import { CUSTOMER_OPERATIONS } from '../domain/customers.service';
import { parseArgs } from 'node:util';
import { auditCommandLineChange } from '../../../audit/cli/command-line-audit';
import { AuditEventEntity } from '../../../audit/trail/persistence/audit-event.entity';
import { isUuid } from '../../../common/domain/identifiers';
import { CliIo, Command, runCommandLine, UsageError } from '../../../database/cli/command-line';
import { CustomerTenantEntity } from '../persistence/customer-tenant.entity';
import { PostgresCustomerOwnershipRepository } from '../persistence/postgres-customer-ownership.repository';

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
  const tenant = values.tenant;
  const id = customerId.toLowerCase();
  // The link and its audit event commit together: a change no one can find is not made.
  const owner = await database.dataSource.transaction(async (manager) => {
    const assigned = await new PostgresCustomerOwnershipRepository(manager.getRepository(CustomerTenantEntity)).assign(id, tenant, 'linked');
    const refused = assigned !== tenant;
    await auditCommandLineChange(manager, {
      operation: CUSTOMER_OPERATIONS.link,
      command: 'customers link',
      phase: refused ? 'rejected' : 'succeeded',
      customerId: id,
      tenant,
      ...(refused ? { errorMessage: 'The customer belongs to another tenant' } : {}),
    });
    return assigned;
  });
  if (owner !== tenant) {
    io.err(`Customer ${customerId} already belongs to another tenant; nothing changed.`);
    return 1;
  }
  io.out(JSON.stringify({ customer_id: id, tenant: owner }));
  return 0;
};

/** Runs the customers CLI; returns the exit code. */
export function runCustomersCli(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  return runCommandLine({ usage: USAGE, commands: { link }, entities: [CustomerTenantEntity, AuditEventEntity] }, argv, env, io);
}
