import { DynamicModule, Global, Module } from '@nestjs/common';
import { ErrorDocs } from '../common/http/error-docs';
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
      ],
      exports: [GatewayConfig, ErrorDocs],
    };
  }
}
