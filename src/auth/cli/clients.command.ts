import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { SystemClock } from '../../common/clock.port';
import { DomainError } from '../../common/domain-error';
import { ConfigurationError } from '../../config/load-config';
import { openDatabase } from '../../database/cli/open-database';
import { isUuid } from '../../common/field-rules';
import { API_CLIENT_ROLES, ApiClientRole } from '../domain/api-client';
import { ApiClientsService } from '../domain/api-clients.service';
import { ApiClientResponseDto } from '../http/api-client.response.dto';
import { CustomerTenantEntity } from '../../customers/persistence/customer-tenant.entity';
import { TypeOrmCustomerOwnershipRepository } from '../../customers/persistence/typeorm-customer-ownership.repository';
import { ApiClientEntity } from '../persistence/api-client.entity';
import { TypeOrmApiClientRepository } from '../persistence/typeorm-api-client.repository';

const USAGE = `Usage: npm run clients -- <command> [options]

  create --name NAME --role partner|admin [--tenant T] [--expires-at ISO-8601]
         Prints {"id","name","role","tenant","token","expires_at"}: the only time the token is shown.
  list   One JSON line per client (never tokens).
  revoke --name NAME
         Revokes the active client with that name; its token is refused from then on.
  link-customer --tenant T --customer-id ID
         Gives a customer created elsewhere (not through this service) to tenant T, so that T's
         clients may read its balance and open accounts for it. Refused if another tenant has it.
`;

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

class UsageError extends Error {}

function parseExpiry(value: string | undefined): Date | null {
  if (value === undefined) return null;
  const isoDateTime = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;
  const parsed = new Date(value);
  if (!isoDateTime.test(value) || Number.isNaN(parsed.getTime())) {
    throw new UsageError(`--expires-at must be an ISO-8601 date or date-time with a zone, got '${value}'`);
  }
  return parsed;
}

export function apiClientsServiceFor(dataSource: DataSource): ApiClientsService {
  return new ApiClientsService(new TypeOrmApiClientRepository(dataSource.getRepository(ApiClientEntity)), new SystemClock());
}

async function execute(command: string, args: string[], service: ApiClientsService, io: CliIo, defaultTenant: string) {
  switch (command) {
    case 'create': {
      const { values } = parseArgs({
        args,
        options: {
          name: { type: 'string' },
          role: { type: 'string' },
          tenant: { type: 'string' },
          'expires-at': { type: 'string' },
        },
        strict: true,
      });
      if (!values.name) throw new UsageError('--name is required');
      if (!values.role || !API_CLIENT_ROLES.includes(values.role as ApiClientRole)) {
        throw new UsageError(`--role must be one of ${API_CLIENT_ROLES.join(', ')}`);
      }
      const { client, token } = await service.create({
        name: values.name,
        role: values.role as ApiClientRole,
        tenant: values.tenant ?? defaultTenant,
        expiresAt: parseExpiry(values['expires-at']),
      });
      io.out(
        JSON.stringify({
          id: client.id,
          name: client.name,
          role: client.role,
          tenant: client.tenant,
          token,
          expires_at: client.expiresAt?.toISOString() ?? null,
        }),
      );
      return 0;
    }
    case 'list': {
      parseArgs({ args, options: {}, strict: true });
      for (const client of await service.list()) io.out(JSON.stringify(ApiClientResponseDto.fromClient(client)));
      return 0;
    }
    case 'revoke': {
      const { values } = parseArgs({ args, options: { name: { type: 'string' } }, strict: true });
      if (!values.name) throw new UsageError('--name is required');
      const revoked = await service.revoke(values.name);
      if (!revoked) {
        io.err(`No active client named '${values.name}'.`);
        return 1;
      }
      io.out(JSON.stringify(ApiClientResponseDto.fromClient(revoked)));
      return 0;
    }
    default:
      throw new UsageError(command ? `Unknown command '${command}'` : 'A command is required');
  }
}

async function linkCustomer(args: string[], dataSource: DataSource, io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, 'customer-id': { type: 'string' } }, strict: true });
  const customerId = values['customer-id'];
  if (!values.tenant || values.tenant.length > 64) throw new UsageError('--tenant is required (at most 64 characters)');
  if (!customerId || !isUuid(customerId)) throw new UsageError('--customer-id must be the customer’s UUID');
  const ownership = new TypeOrmCustomerOwnershipRepository(dataSource.getRepository(CustomerTenantEntity));
  const owner = await ownership.assign(customerId.toLowerCase(), values.tenant, 'linked');
  if (owner !== values.tenant) {
    io.err(`Customer ${customerId} already belongs to another tenant; nothing changed.`);
    return 1;
  }
  io.out(JSON.stringify({ customer_id: customerId.toLowerCase(), tenant: owner }));
  return 0;
}

/** Runs the clients CLI; returns the exit code. Separate from process handling so tests can call it. */
export async function runClientsCli(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const [command = '', ...args] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    io.out(USAGE);
    return 0;
  }
  if (!['create', 'list', 'revoke', 'link-customer'].includes(command)) {
    io.err(`${command ? `Unknown command '${command}'` : 'A command is required'}\n\n${USAGE}`);
    return 2;
  }
  let database;
  try {
    database = await openDatabase(env, { migrate: true });
    if (command === 'link-customer') return await linkCustomer(args, database.dataSource, io);
    const service = apiClientsServiceFor(database.dataSource);
    return await execute(command, args, service, io, database.config.DEFAULT_TENANT);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const parseArgsError = typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
    if (error instanceof UsageError || parseArgsError) {
      io.err(`${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof DomainError || error instanceof ConfigurationError) {
      io.err(error.message);
      return 1;
    }
    throw error;
  } finally {
    await database?.close();
  }
}
