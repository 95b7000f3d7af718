import { DataSource } from 'typeorm';
import { SystemClock } from '../../common/domain/clock.port';
import { ConfigurationError } from '../../config/load-config';
import { DatabaseUrls } from '../../database/database-roles';
import { Sql } from '../../database/sql';
import { dataSourceOptions } from '../../database/typeorm-options';
import { ApiClientsService } from '../domain/api-clients.service';
import { ApiClientEntity } from './api-client.entity';
import { PostgresApiClientRepository } from './postgres-api-client.repository';

/** API clients on a data source of the caller's. */
export function apiClientsServiceFor(dataSource: DataSource): ApiClientsService {
  return new ApiClientsService(new PostgresApiClientRepository(dataSource.getRepository(ApiClientEntity), Sql.of(dataSource)), new SystemClock());
}

/** A change to API clients asked of a role that may only read them: MIGRATIONS_DATABASE_URL is missing. */
export class ClientChangesNeedTheOwner extends ConfigurationError {
  constructor() {
    super([
      "MIGRATIONS_DATABASE_URL: required to create, revoke or change API clients, which is the schema owner's to do; " +
        'the service\'s own role (DATABASE_URL) may only read them (docs/operations.md, "Database roles")',
    ]);
  }
}

/**
 * Creating, revoking and changing API clients goes through the schema owner (MIGRATIONS_DATABASE_URL),
 * never the service's role: anyone holding DATABASE_URL (every pod) could otherwise make itself an
 * admin. With one URL for both (a development database), that one.
 */
export async function withApiClientsAsOwner<T>(urls: DatabaseUrls, work: (clients: ApiClientsService) => Promise<T>): Promise<T> {
  const dataSource = await new DataSource(dataSourceOptions(urls.ownerUrl ?? urls.url, { poolSize: 1, entities: [ApiClientEntity] })).initialize();
  try {
    return await work(apiClientsServiceFor(dataSource));
  } catch (error) {
    if ((error as { code?: string }).code === '42501' && !urls.ownerUrl) throw new ClientChangesNeedTheOwner();
    throw error;
  } finally {
    await dataSource.destroy();
  }
}
