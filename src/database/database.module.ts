import { DynamicModule, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/load-config';
import { dataSourceOptions, runMigrations } from './typeorm-options';

@Module({})
export class DatabaseModule {
  static forRoot(url: string): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService<AppConfig, true>) => ({
            ...dataSourceOptions(url, config.getOrThrow('DATABASE_POOL_SIZE', { infer: true })),
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
