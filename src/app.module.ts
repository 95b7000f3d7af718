import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AccessGuard } from './auth/http/access.guard';
import { AuditModule } from './audit/audit.module';
import { AuthModule } from './auth/auth.module';
import { BalancesModule } from './partner-api/balances/balances.module';
import { BankAccountsModule } from './partner-api/bank-accounts/bank-accounts.module';
import { CustomersModule } from './partner-api/customers/customers.module';
import { EventsModule } from './partner-api/events/events.module';
import { WebhooksModule } from './partner-api/webhooks/webhooks.module';
import { CommonModule } from './common/runtime/common.module';
import { SealingModule } from './common/sealing/sealing.module';
import { ErrorEnvelopeFilter } from './common/http/error-envelope.filter';
import { ReferenceModule } from './reference/reference.module';
import { createValidationPipe } from './common/http/validation';
import { ConfigurationModule } from './config/configuration.module';
import { GatewayConfig } from './config/gateway-config';
import { DatabaseUrls } from './database/database-roles';
import { DatabaseModule } from './database/database.module';
import { ENTITIES } from './entities';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { UpstreamModule } from './upstream/upstream.module';
import { UpstreamSettings } from './upstream/upstream.settings';

export interface AppModuleOptions {
  readonly config: GatewayConfig;
  readonly database: DatabaseUrls;
  /** The provider, or the sandbox standing in for it. */
  readonly upstream: UpstreamSettings;
}

@Module({})
export class AppModule {
  static forRoot({ config, database, upstream }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // Validated once before start-up (see main.ts); Nest gets the typed result, and only it: nothing is
        // read from process.env, nor written to it (its `validate` would copy every setting, secrets and
        // defaults included, into process.env, where child processes inherit it and a second application
        // in the same process would read the first one's).
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, validatePredefined: false, skipProcessEnv: true, load: [() => ({ ...config.settings })] }),
        ConfigurationModule.of(config),
        CommonModule,
        SealingModule,
        MetricsModule,
        DatabaseModule.forRoot(database, ENTITIES),
        UpstreamModule.forRoot(upstream),
        AuditModule,
        AuthModule,
        RateLimitModule,
        CustomersModule,
        BalancesModule,
        BankAccountsModule,
        EventsModule,
        WebhooksModule.forRoot({ databaseUrl: database.url, deliver: config.settings.WEBHOOK_DELIVERY }),
        HealthModule,
        ReferenceModule,
      ],
      providers: [
        // Every route's access: the caller the edge's identify stage found, held to the route's decorators.
        { provide: APP_GUARD, useClass: AccessGuard },
        // Its answer (the terminal audit event of a success, then the envelope) is Fastify's hook (common/http/answer.ts,
        // installed by createApp). A failure anywhere: the one filter.
        { provide: APP_FILTER, useClass: ErrorEnvelopeFilter },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }
}
