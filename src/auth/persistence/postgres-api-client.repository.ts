import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, QueryFailedError, Repository } from 'typeorm';
import { Sql } from '../../database/sql';
import { unavailableOnOutage } from '../../database/store-errors';
import { ApiClient } from '../domain/api-client';
import { ApiClientStore, StoredApiClient } from '../domain/api-client-store.port';
import { ApiClientNameTaken } from '../domain/auth.errors';
import { ApiClientEntity } from './api-client.entity';
import { ApiClientMapper } from './api-client.mapper';

const UNIQUE_VIOLATION = '23505';
const FIND_BY_TOKEN_HASH =
  'SELECT id, name, role, tenant, token_hash AS "tokenHash", created_at AS "createdAt", expires_at AS "expiresAt", revoked_at AS "revokedAt" ' +
  'FROM api_clients WHERE token_hash = $1';

@Injectable()
export class PostgresApiClientRepository extends ApiClientStore {
  constructor(
    @InjectRepository(ApiClientEntity) private readonly rows: Repository<ApiClientEntity>,
    private readonly sql: Sql,
  ) {
    super();
  }

  async insert(client: StoredApiClient): Promise<void> {
    try {
      await this.rows.insert({ ...client });
    } catch (error) {
      if (error instanceof QueryFailedError && (error.driverError as { code?: string }).code === UNIQUE_VIOLATION) {
        throw new ApiClientNameTaken(client.name);
      }
      throw error;
    }
  }

  /** Runs whenever a token is not remembered (see ApiClientsService): plain SQL on pg. */
  async findByTokenHash(tokenHash: string): Promise<StoredApiClient | undefined> {
    const found = await unavailableOnOutage(() => this.sql.query<ApiClientEntity>(FIND_BY_TOKEN_HASH, [tokenHash]));
    return found[0] ? ApiClientMapper.toStored(found[0]) : undefined;
  }

  async list(): Promise<ApiClient[]> {
    const rows = await this.rows.find({ order: { createdAt: 'DESC' } });
    return rows.map((row) => ApiClientMapper.toDomain(row));
  }

  async revokeActiveByName(name: string, at: Date): Promise<ApiClient | undefined> {
    const row = await this.rows.findOneBy({ name, revokedAt: IsNull() });
    if (!row) return undefined;
    await this.rows.update({ id: row.id }, { revokedAt: at });
    return ApiClientMapper.toDomain({ ...row, revokedAt: at });
  }

  count(): Promise<number> {
    return this.rows.count();
  }
}
