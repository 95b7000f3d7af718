import { Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditSealMonitor } from '../common/domain/audit-seal-status';
import { RequestRecorder } from '../common/http/request-recorder.port';
import { auditSettingsOf, AuditSettings } from './audit.settings';
import { AuditRetentionSchedule } from './audit-retention.schedule';
import { AuditSealSchedule } from './audit-seal.schedule';
import { AuditLog } from './domain/audit-log.port';
import { AuditEventsService } from './domain/audit-events.service';
import { AuditRetention } from './domain/audit-retention.service';
import { AuditSealStore, CheckpointSigner, TrustedKeys } from './domain/audit-seal.port';
import { AuditSealer } from './domain/audit-sealer.service';
import { AuditTrail } from './domain/audit-trail.service';
import { AuditCheckpointsController } from './http/audit-checkpoints.controller';
import { AuditEventsController } from './http/audit-events.controller';
import { UnresolvedCallsController } from './http/unresolved-calls.controller';
import { UnresolvedCalls } from './domain/unresolved-calls.service';
import { RequestAuditor } from './http/request-auditor';
import { AuditEventEntity } from './persistence/audit-event.entity';
import { PgAuditSealStore } from './persistence/pg-audit-seal.store';
import { TypeOrmAuditLogRepository } from './persistence/typeorm-audit-log.repository';
import { Ed25519CheckpointSigner, Ed25519TrustedKeys, loadSigningKey } from './signing/audit-signing-keys';
import { readAuditPublicKeys } from '../config/audit-keys';

@Module({
  imports: [TypeOrmModule.forFeature([AuditEventEntity])],
  controllers: [AuditEventsController, AuditCheckpointsController, UnresolvedCallsController],
  providers: [
    TypeOrmAuditLogRepository,
    { provide: AuditLog, useExisting: TypeOrmAuditLogRepository },
    { provide: AuditSealStore, useClass: PgAuditSealStore },
    { provide: AuditSettings, inject: [ConfigService], useFactory: auditSettingsOf },
    {
      provide: CheckpointSigner,
      inject: [AuditSettings],
      useFactory: (settings: AuditSettings) => {
        const { key, generated } = loadSigningKey({ AUDIT_SIGNING_KEY: settings.signingKey, DATA_DIR: settings.dataDir });
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
    AuditSealSchedule,
    { provide: AuditSealMonitor, useExisting: AuditSealSchedule },
    AuditTrail,
    AuditEventsService,
    UnresolvedCalls,
    AuditRetention,
    AuditRetentionSchedule,
    RequestAuditor,
    { provide: RequestRecorder, useExisting: RequestAuditor },
  ],
  exports: [AuditTrail, RequestRecorder, AuditSealMonitor],
})
export class AuditModule {}
