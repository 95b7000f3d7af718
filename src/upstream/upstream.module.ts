import { DynamicModule, Global, Module } from '@nestjs/common';
import { BalanceGateway } from '../balances/domain/balance.gateway.port';
import { BankAccountGateway } from '../bank-accounts/domain/bank-account.gateway.port';
import { Metrics } from '../common/domain/metrics.port';
import { UpstreamCircuit } from '../common/domain/upstream';
import { CustomerGateway } from '../customers/domain/customer.gateway.port';
import { JwePayloadCipher, PayloadCipher, PlainPayloadCipher } from './payload-cipher';
import { RequestSigner } from './request-signer';
import { UpstreamBalanceAdapter } from './upstream-balance.adapter';
import { UpstreamBankAccountAdapter } from './upstream-bank-account.adapter';
import { UpstreamCustomerAdapter } from './upstream-customer.adapter';
import { UpstreamHttpClient } from './upstream-http.client';
import { UpstreamSettings } from './upstream.settings';

/**
 * The outbound adapter. It binds the features' gateway ports to its adapters and exports the ports,
 * so that a feature module never names an adapter.
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
        { provide: UpstreamCircuit, useExisting: UpstreamHttpClient },
        { provide: CustomerGateway, useExisting: UpstreamCustomerAdapter },
        { provide: BalanceGateway, useExisting: UpstreamBalanceAdapter },
        { provide: BankAccountGateway, useExisting: UpstreamBankAccountAdapter },
      ],
      exports: [UpstreamCircuit, CustomerGateway, BalanceGateway, BankAccountGateway],
    };
  }
}
