import { DynamicModule, Global, Module } from '@nestjs/common';
import { ErrorDocs } from '../common/http/error-docs';
import { BackgroundWork } from '../common/domain/background-work';
import { GatewayConfig } from './gateway-config';

/** The configuration, made once at start: one object for the whole application, injected as GatewayConfig. */
@Global()
@Module({})
export class ConfigurationModule {
  static of(config: GatewayConfig): DynamicModule {
    return {
      module: ConfigurationModule,
      providers: [
        { provide: GatewayConfig, useValue: config },
        { provide: ErrorDocs, useValue: config.errorDocs },
        // What this process runs (PROCESS_ROLE): the API, the background work, or both.
        { provide: BackgroundWork, useValue: new BackgroundWork(config.settings.PROCESS_ROLE) },
      ],
      exports: [GatewayConfig, ErrorDocs, BackgroundWork],
    };
  }
}
