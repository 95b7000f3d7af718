import { ApiClient } from '../domain/api-client';
import { StoredApiClient } from '../domain/api-client-store.port';
import { ApiClientEntity } from './api-client.entity';

export class ApiClientMapper {
  static toDomain(row: ApiClientEntity): ApiClient {
    return {
      id: row.id,
      name: row.name,
      role: row.role,
      tenant: row.tenant,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      revokedAt: row.revokedAt,
    };
  }

  static toStored(row: ApiClientEntity): StoredApiClient {
    return { ...ApiClientMapper.toDomain(row), tokenHash: row.tokenHash };
  }
}
