import { DynamicModule, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { AuditModule } from './audit/audit.module';
import { AuditInterceptor } from './audit/http/audit.interceptor';
import { AuthModule } from './auth/auth.module';
import { BearerAuthGuard } from './auth/http/bearer-auth.guard';
import { BalancesModule } from './balances/balances.module';
import { BankAccountsModule } from './bank-accounts/bank-accounts.module';
import { CustomersModule } from './customers/customers.module';
import { CommonModule } from './common/runtime/common.module';
import { EnvelopeInterceptor } from './common/http/envelope.interceptor';
import { ErrorEnvelopeFilter } from './common/http/error-envelope.filter';
import { loggerParams } from './common/runtime/logging';
import { createValidationPipe } from './common/http/validation';
import { AppConfig } from './config/load-config';
import { DatabaseModule } from './database/database.module';
import { ENTITIES } from './entities';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { RateLimitGuard } from './rate-limit/rate-limit.guard';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { UpstreamModule } from './upstream/upstream.module';
import { UpstreamSettings } from './upstream/upstream.settings';
import { RequestRecordMiddleware } from './common/http/request-record.middleware';

export interface AppModuleOptions {
  readonly config: AppConfig;
  readonly databaseUrl: string;
  /** The provider, or the sandbox standing in for it. */
  readonly upstream: UpstreamSettings;
  /** Where logs go instead of stdout (tests read them). */
  readonly logStream?: DestinationStream;
}

@Module({})
export class AppModule implements NestModule {
  static forRoot({ config, databaseUrl, upstream, logStream }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // Validated once before start-up (see main.ts); Nest gets the typed result.
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, validate: () => config }),
        LoggerModule.forRoot(loggerParams(config.LOG_LEVEL, logStream)),
        CommonModule,
        MetricsModule,
        DatabaseModule.forRoot(databaseUrl, ENTITIES),
        UpstreamModule.forRoot(upstream),
        AuditModule,
        AuthModule,
        RateLimitModule,
        CustomersModule,
        BalancesModule,
        BankAccountsModule,
        HealthModule,
      ],
      providers: [
        // In this order: a caller over its limit is refused before its token is checked again.
        { provide: APP_GUARD, useExisting: RateLimitGuard },
        { provide: APP_GUARD, useExisting: BearerAuthGuard },
        { provide: APP_FILTER, useClass: ErrorEnvelopeFilter },
        // The terminal audit event of a success is written before the envelope is made.
        { provide: APP_INTERCEPTOR, useExisting: AuditInterceptor },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestRecordMiddleware).forRoutes({ path: '*path', method: RequestMethod.ALL });
  }
}
