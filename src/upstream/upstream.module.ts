import { DynamicModule, Global, Module } from '@nestjs/common';
import { Metrics } from '../common/domain/metrics.port';
import { UpstreamCircuit } from '../common/domain/upstream';
import { JwePayloadCipher, PayloadCipher, PlainPayloadCipher } from './payload-cipher';
import { RequestSigner } from './request-signer';
import { UpstreamHttpClient } from './upstream-http.client';
import { UpstreamSettings } from './upstream.settings';

/**
 * The provider's protocol, shared by the partner API's slices: one HTTP client (its transport,
 * retries and circuit breaker), one signer, one cipher, and how the provider's answers are read.
 * Each slice's provider adapter (`partner-api/<slice>/provider/`) calls it; the slice's module binds
 * its own gateway port to that adapter.
 */
@Global()
@Module({})
export class UpstreamModule {
  static forRoot(settings: UpstreamSettings): DynamicModule {
    return {
      module: UpstreamModule,
      providers: [
        { provide: UpstreamSettings, useValue: settings },
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
        { provide: UpstreamCircuit, useExisting: UpstreamHttpClient },
      ],
      exports: [UpstreamSettings, UpstreamHttpClient, UpstreamCircuit],
    };
  }
}
