import { DynamicModule, Global, Module } from '@nestjs/common';
import { Metrics } from '../common/metrics.port';
import { JwePayloadCipher, PayloadCipher, PlainPayloadCipher } from './payload-cipher';
import { RequestSigner } from './request-signer';
import { UpstreamBalanceAdapter } from './upstream-balance.adapter';
import { UpstreamBankAccountAdapter } from './upstream-bank-account.adapter';
import { UpstreamCustomerAdapter } from './upstream-customer.adapter';
import { UpstreamHttpClient } from './upstream-http.client';
import { UpstreamSettings } from './upstream.settings';

/**
 * The outbound adapter. Feature modules bind their gateway ports to the adapters exported here
 * (`{ provide: CustomerGateway, useExisting: UpstreamCustomerAdapter }`).
 */
@Global()
@Module({})
export class UpstreamModule {
  static forRoot(settings: UpstreamSettings): DynamicModule {
    return {
      module: UpstreamModule,
      providers: [
        { provide: RequestSigner, useFactory: () => new RequestSigner(settings.publicKey.pem) },
        {
          provide: PayloadCipher,
          useFactory: () => (settings.encryption === 'jwe' ? new JwePayloadCipher(settings.publicKey.key) : new PlainPayloadCipher()),
        },
        {
          provide: UpstreamHttpClient,
          inject: [RequestSigner, PayloadCipher, Metrics],
          useFactory: (signer: RequestSigner, cipher: PayloadCipher, metrics: Metrics) => new UpstreamHttpClient(settings, signer, cipher, metrics),
        },
        UpstreamCustomerAdapter,
        UpstreamBalanceAdapter,
        {
          provide: UpstreamBankAccountAdapter,
          inject: [UpstreamHttpClient],
          useFactory: (client: UpstreamHttpClient) => new UpstreamBankAccountAdapter(client, settings.bankAccountPath),
        },
      ],
      exports: [UpstreamHttpClient, UpstreamCustomerAdapter, UpstreamBalanceAdapter, UpstreamBankAccountAdapter],
    };
  }
}
