import { Global, Logger, Module } from '@nestjs/common';
import { loadDataKeys } from '../../config/end-user-settings';
import { GatewayConfig } from '../../config/gateway-config';
import { DataBox } from '../domain/sealed-box.port';
import { JoseSealedBox } from './jose-sealed-box';

/** The one box partners' data is sealed in at rest (DataBox), under DATA_KEY. */
@Global()
@Module({
  providers: [
    {
      provide: DataBox,
      inject: [GatewayConfig],
      useFactory: ({ settings }: GatewayConfig): DataBox => {
        const { key, previous, generated } = loadDataKeys(settings);
        // Only where DATA_KEY may be unset (production requires it): development's own key, as expected.
        if (generated) new Logger('Sealing').debug('Made the data key under DATA_DIR: replicas must share one (DATA_KEY)');
        return new JoseSealedBox(key, previous);
      },
    },
  ],
  exports: [DataBox],
})
export class SealingModule {}
