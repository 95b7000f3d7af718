import { DynamicModule, Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, DataSourceOptions } from 'typeorm';
import type { AuditEnvironment } from '../config/environment/audit.environment';
import type { DatabaseEnvironment } from '../config/environment/database.environment';
import { ReadinessConnection } from './readiness-connection';
import { DatabaseRoles, DatabaseUrls, migrateAsOwner, OwnerPolicy, protectionOf } from './database-roles';
import { PostgresNotifications } from './postgres-notifications';
import { SharedCommit } from './shared-commit';
import { Sql } from './sql';
import { dataSourceOptions } from './typeorm-options';

/**
 * The database: TypeORM's DataSource (schema, migrations, most queries), the same pool as plain
 * SQL for the statements every request runs, and one connection that LISTENs for changes. The
 * service connects as its own role; the migrations run as the schema's owner (database-roles.ts).
 */
@Module({})
export class DatabaseModule {
  /** `entities` come from the composition root (src/entities.ts): this module knows no feature. */
  static forRoot({ url, ownerUrl }: DatabaseUrls, entities: DataSourceOptions['entities']): DynamicModule {
    // Read from the configuration with the data source's options; applied by the owner after the migrations.
    let policy: OwnerPolicy | undefined;
    return {
      module: DatabaseModule,
      global: true,
      providers: [
        { provide: Sql, inject: [DataSource], useFactory: (dataSource: DataSource) => Sql.of(dataSource) },
        // One for the service: the stores whose rows share statements (audit events, DPoP proofs) share its batches.
        { provide: SharedCommit, inject: [Sql], useFactory: (sql: Sql) => new SharedCommit(sql) },
        { provide: PostgresNotifications, useFactory: () => new PostgresNotifications(url) },
        { provide: ReadinessConnection, useFactory: () => new ReadinessConnection(url) },
        {
          provide: DatabaseRoles,
          inject: [DataSource],
          useFactory: async (dataSource: DataSource) => {
            const protection = await protectionOf(dataSource);
            if (!protection.separated) {
              new Logger('Database').warn(
                { role: protection.role },
                `The audit log is not protected from the service: ${protection.reason}, so it could rewrite the log; set MIGRATIONS_DATABASE_URL to the schema's owner and DATABASE_URL to a role of the service's own (docs/operations.md)`,
              );
            }
            return new DatabaseRoles(protection);
          },
        },
      ],
      exports: [Sql, SharedCommit, PostgresNotifications, DatabaseRoles, ReadinessConnection],
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService<DatabaseEnvironment & Pick<AuditEnvironment, 'AUDIT_RETENTION_DAYS'>, true>) => {
            policy = { auditRetentionDays: config.getOrThrow('AUDIT_RETENTION_DAYS', { infer: true }) };
            return {
              ...dataSourceOptions(url, { poolSize: config.getOrThrow('DATABASE_POOL_SIZE', { infer: true }), entities }),
              migrationsRun: config.getOrThrow('MIGRATIONS_RUN', { infer: true }),
              retryAttempts: 5,
              retryDelay: 1000,
            };
          },
          dataSourceFactory: async (options) => {
            if (!options) throw new Error('TypeORM options missing');
            const dataSource = await new DataSource({ ...options, migrationsRun: false }).initialize();
            if (options.migrationsRun) await migrateAsOwner(dataSource, ownerUrl, policy);
            return dataSource;
          },
        }),
      ],
    };
  }
}
