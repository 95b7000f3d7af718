import { DynamicModule, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/load-config';
import { PostgresNotifications } from './postgres-notifications';
import { Sql } from './sql';
import { dataSourceOptions, runMigrations } from './typeorm-options';

/**
 * The database: TypeORM's DataSource (schema, migrations, most queries), the same pool as plain
 * SQL for the statements every request runs, and one connection that LISTENs for changes.
 */
@Module({})
export class DatabaseModule {
  /** `entities` come from the composition root (src/entities.ts): this module knows no feature. */
  static forRoot(url: string, entities: DataSourceOptions['entities']): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [
        { provide: Sql, inject: [DataSource], useFactory: (dataSource: DataSource) => Sql.of(dataSource) },
        { provide: PostgresNotifications, useFactory: () => new PostgresNotifications(url) },
      ],
      exports: [Sql, PostgresNotifications],
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService<AppConfig, true>) => ({
            ...dataSourceOptions(url, { poolSize: config.getOrThrow('DATABASE_POOL_SIZE', { infer: true }), entities }),
            migrationsRun: config.getOrThrow('MIGRATIONS_RUN', { infer: true }),
            retryAttempts: 5,
            retryDelay: 1000,
          }),
          dataSourceFactory: async (options) => {
            if (!options) throw new Error('TypeORM options missing');
            const dataSource = await new DataSource({ ...options, migrationsRun: false }).initialize();
            if (options.migrationsRun) await runMigrations(dataSource);
            return dataSource;
          },
        }),
      ],
    };
  }
}
