import { DynamicModule, Module } from '@nestjs/common';
import { GatewayConfig } from '../../config/gateway-config';
import { EventsModule } from '../events/events.module';
import { DeliveryJobs, WebhookSigner, WebhookTransport } from './domain/delivery.ports';
import { DestinationPolicy } from './domain/destination-policy';
import { WebhookSigningKeys } from './domain/signing-keys.port';
import { WebhookEndpoints } from './domain/webhook-endpoint';
import { WebhookEndpointsService } from './domain/webhook-endpoints.service';
import { DeliveryRunner, DeliveryRunnerOptions } from './delivery/delivery-runner';
import { StandardWebhooksSigner } from './delivery/standard-webhooks-signer';
import { UndiciWebhookTransport } from './delivery/undici-webhook-transport';
import { WebhookDelivery } from './delivery/webhook-delivery.service';
import { EventDeliveriesController, WebhookEndpointsController, WebhookKeysController } from './http/webhook-endpoints.controller';
import { PostgresDeliveryJobs } from './persistence/postgres-delivery-jobs.repository';
import { PostgresWebhookSigningKeys } from './persistence/postgres-signing-keys.repository';
import { PostgresWebhookEndpoints } from './persistence/postgres-webhook-endpoints.repository';

export interface WebhooksModuleOptions {
  /** The database the job engine connects to (DATABASE_URL). */
  readonly databaseUrl: string;
  /** Whether this process runs deliveries. */
  readonly deliver: boolean;
}

/** Webhook endpoints, their delivery log, and the delivery of events to them (docs/webhooks.md). */
@Module({})
export class WebhooksModule {
  static forRoot(options: WebhooksModuleOptions): DynamicModule {
    return {
      module: WebhooksModule,
      imports: [EventsModule],
      controllers: [WebhookEndpointsController, EventDeliveriesController, WebhookKeysController],
      providers: [
        WebhookEndpointsService,
        WebhookDelivery,
        DeliveryRunner,
        {
          provide: DestinationPolicy,
          inject: [GatewayConfig],
          useFactory: ({ settings }: GatewayConfig) => new DestinationPolicy(settings.WEBHOOK_LOCAL_URLS ?? settings.NODE_ENV !== 'production'),
        },
        {
          provide: DeliveryRunnerOptions,
          inject: [GatewayConfig],
          useFactory: ({ settings }: GatewayConfig): DeliveryRunnerOptions => ({
            databaseUrl: options.databaseUrl,
            concurrency: settings.WEBHOOK_CONCURRENCY,
            enabled: options.deliver,
            lostAfterMs: settings.WEBHOOK_WORKER_LOST_AFTER_MS,
          }),
        },
        { provide: WebhookEndpoints, useClass: PostgresWebhookEndpoints },
        { provide: DeliveryJobs, useClass: PostgresDeliveryJobs },
        { provide: WebhookTransport, useClass: UndiciWebhookTransport },
        { provide: WebhookSigner, useClass: StandardWebhooksSigner },
        { provide: WebhookSigningKeys, useClass: PostgresWebhookSigningKeys },
      ],
    };
  }
}
