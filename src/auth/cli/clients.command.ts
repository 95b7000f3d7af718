import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { SystemClock } from '../../common/domain/clock.port';
import { CliIo, Command, runCommandLine, UsageError } from '../../database/cli/command-line';
import { Sql } from '../../database/sql';
import { API_CLIENT_ROLES, ApiClientRole } from '../domain/api-client';
import { ApiClientsService } from '../domain/api-clients.service';
import { ApiClientResponseDto } from '../http/api-client.response.dto';
import { ApiClientEntity } from '../persistence/api-client.entity';
import { TypeOrmApiClientRepository } from '../persistence/typeorm-api-client.repository';

const USAGE = `Usage: npm run clients -- <command> [options]

  create --name NAME --role partner|admin [--tenant T] [--expires-at ISO-8601]
         Prints {"id","name","role","tenant","token","expires_at"}: the only time the token is shown.
  list   One JSON line per client (never tokens).
  revoke --name NAME
         Revokes the active client with that name; its token is refused from then on.

  (A customer created elsewhere is given to a tenant with npm run customers -- link.)
`;

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
  return new ApiClientsService(new TypeOrmApiClientRepository(dataSource.getRepository(ApiClientEntity), Sql.of(dataSource)), new SystemClock());
}

const create: Command = async (args, { database, config, io }) => {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, role: { type: 'string' }, tenant: { type: 'string' }, 'expires-at': { type: 'string' } },
    strict: true,
  });
  if (!values.name) throw new UsageError('--name is required');
  if (!values.role || !API_CLIENT_ROLES.includes(values.role as ApiClientRole)) {
    throw new UsageError(`--role must be one of ${API_CLIENT_ROLES.join(', ')}`);
  }
  const { client, token } = await apiClientsServiceFor(database.dataSource).create({
    name: values.name,
    role: values.role as ApiClientRole,
    tenant: values.tenant ?? config.DEFAULT_TENANT,
    expiresAt: parseExpiry(values['expires-at']),
  });
  io.out(
    JSON.stringify({ id: client.id, name: client.name, role: client.role, tenant: client.tenant, token, expires_at: client.expiresAt?.toISOString() ?? null }),
  );
  return 0;
};

const list: Command = async (args, { database, io }) => {
  parseArgs({ args, options: {}, strict: true });
  for (const client of await apiClientsServiceFor(database.dataSource).list()) io.out(JSON.stringify(ApiClientResponseDto.fromClient(client)));
  return 0;
};

const revoke: Command = async (args, { database, io }) => {
  const { values } = parseArgs({ args, options: { name: { type: 'string' } }, strict: true });
  if (!values.name) throw new UsageError('--name is required');
  const revoked = await apiClientsServiceFor(database.dataSource).revoke(values.name);
  if (!revoked) {
    io.err(`No active client named '${values.name}'.`);
    return 1;
  }
  io.out(JSON.stringify(ApiClientResponseDto.fromClient(revoked)));
  return 0;
};

/** Runs the clients CLI; returns the exit code. */
export function runClientsCli(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  return runCommandLine({ usage: USAGE, commands: { create, list, revoke }, entities: [ApiClientEntity] }, argv, env, io);
}
