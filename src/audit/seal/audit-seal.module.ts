import { Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AuditSealMonitor } from '../../common/domain/audit-seal-status';
import { readAuditPublicKeys } from '../../config/audit-keys';
import { auditSettingsOf, AuditSettings } from '../audit.settings';
import { AuditSealSchedule } from './audit-seal.schedule';
import { AuditSealStore, CheckpointSigner, TrustedKeys } from './domain/audit-seal.port';
import { AuditSealer } from './domain/audit-sealer.service';
import { AuditCheckpointsController } from './http/audit-checkpoints.controller';
import { AuditKeysController, AuditReceiptsController, CheckpointConsistencyController } from './http/audit-receipts.controller';
import { CheckpointConsistency } from './domain/checkpoint-consistency';
import { AuditReceipts } from './domain/audit-receipts';
import { SignedReceipts } from './domain/receipt-issuer';
import { ReceiptIssuer } from '../trail/domain/receipt-issuer.port';
import { PostgresAuditSealRepository } from './persistence/postgres-audit-seal.repository';
import { Ed25519CheckpointSigner, Ed25519TrustedKeys, loadSigningKey } from './signing/audit-signing-keys';

/** Sealing: the hash chain of signed checkpoints over the events, extended every second, and its status. */
@Module({
  controllers: [AuditCheckpointsController, AuditReceiptsController, CheckpointConsistencyController, AuditKeysController],
  providers: [
    { provide: AuditSettings, inject: [ConfigService], useFactory: auditSettingsOf },
    { provide: AuditSealStore, useClass: PostgresAuditSealRepository },
    {
      provide: CheckpointSigner,
      inject: [AuditSettings],
      useFactory: (settings: AuditSettings) => {
        const { key, generated } = loadSigningKey({ AUDIT_SIGNING_KEY: settings.signingKey, DATA_DIR: settings.dataDir }, { make: true });
        const signer = new Ed25519CheckpointSigner(key);
        if (generated) new Logger('AuditSealer').log({ key_id: signer.keyId, file: generated }, 'Made the key that signs audit checkpoints');
        if (!settings.signingKey && settings.sharedDatabase) {
          new Logger('AuditSealer').warn(
            { key_id: signer.keyId },
            'AUDIT_SIGNING_KEY is not set: audit checkpoints are signed with the key under DATA_DIR; replicas sharing this database need one key between them (docs/operations.md)',
          );
        }
        return signer;
      },
    },
    {
      // What the sealer accepts as the chain it extends: its own key, and the retired ones.
      provide: TrustedKeys,
      inject: [CheckpointSigner, AuditSettings],
      useFactory: (signer: Ed25519CheckpointSigner, settings: AuditSettings) =>
        new Ed25519TrustedKeys([signer.publicKey, ...(settings.retiredPublicKeys ? readAuditPublicKeys(settings.retiredPublicKeys) : [])]),
    },
    AuditSealer,
    AuditReceipts,
    CheckpointConsistency,
    { provide: ReceiptIssuer, useClass: SignedReceipts },
    AuditSealSchedule,
    { provide: AuditSealMonitor, useExisting: AuditSealSchedule },
  ],
  exports: [AuditSealer, AuditSealMonitor, AuditSettings, ReceiptIssuer],
})
export class AuditSealModule {}
