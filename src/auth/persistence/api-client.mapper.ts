import { CURRENT_API_VERSION, isApiVersion } from '../../common/domain/api-versions';
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
      // A version this build no longer knows (a rollback after a newer one pinned it) is answered as the newest it knows.
      apiVersion: isApiVersion(row.apiVersion) ? row.apiVersion : CURRENT_API_VERSION,
    };
  }

  static toStored(row: ApiClientEntity): StoredApiClient {
    return { ...ApiClientMapper.toDomain(row), tokenHash: row.tokenHash };
  }
}
