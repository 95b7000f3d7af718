import { parseArgs } from 'node:util';
import { CliIo, Command, runCommandLine, UsageError } from '../../database/cli/command-line';
import { CLIENT_ROLES, type ClientRole } from '../../common/domain/request-record';
import { ApiClientResponseDto } from '../http/api-client.response.dto';
import { ApiClientEntity } from '../persistence/api-client.entity';
import { apiClientsServiceFor, withApiClientsAsOwner } from '../persistence/api-clients-as-owner';

const USAGE = `Usage: npm run clients -- <command> [options]

  create --name NAME --role partner|admin [--tenant T] [--expires-at ISO-8601] [--api-version DATE]
         Prints {"id","name","role","tenant","token","expires_at","api_version"}: the only time the
         token is shown. --api-version pins the API version its requests are answered under when
         they name none (docs/api-contract.md, "Versions"); the current one by default.
         An admin token is break-glass (automation and emergencies; staff sign in at the company's
         provider): without --expires-at it expires after ADMIN_TOKEN_DEFAULT_TTL_HOURS (8), every
         request it makes is marked in the audit log, and the GatewayBreakGlassUsed alert fires.
  list   One JSON line per client (never tokens).
  revoke --name NAME
         Revokes the active client with that name; its token is refused from then on.

  create and revoke connect as the schema's owner (MIGRATIONS_DATABASE_URL): the service's own
  role (DATABASE_URL) only reads clients. Rotating a token: create the new client, deploy its
  token, then revoke the old one.

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

const create: Command = async (args, { database, config, io }) => {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      role: { type: 'string' },
      tenant: { type: 'string' },
      'expires-at': { type: 'string' },
      'api-version': { type: 'string' },
    },
    strict: true,
  });
  if (!values.name) throw new UsageError('--name is required');
  if (!values.role || !CLIENT_ROLES.includes(values.role as ClientRole)) {
    throw new UsageError(`--role must be one of ${CLIENT_ROLES.join(', ')}`);
  }
  // An admin token that nobody said should outlive a shift does not.
  const expiresAt =
    parseExpiry(values['expires-at']) ?? (values.role === 'admin' ? new Date(Date.now() + config.ADMIN_TOKEN_DEFAULT_TTL_HOURS * 3_600_000) : null);
  const { client, token } = await withApiClientsAsOwner(database.handle, (clients) =>
    clients.create({
      name: values.name!,
      role: values.role as ClientRole,
      tenant: values.tenant ?? config.DEFAULT_TENANT,
      expiresAt,
      apiVersion: values['api-version'],
    }),
  );
  io.out(
    JSON.stringify({
      id: client.id,
      name: client.name,
      role: client.role,
      tenant: client.tenant,
      token,
      expires_at: client.expiresAt?.toISOString() ?? null,
      api_version: client.apiVersion,
    }),
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
  const revoked = await withApiClientsAsOwner(database.handle, (clients) => clients.revoke(values.name!));
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
