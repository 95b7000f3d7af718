import { ConfigService } from '@nestjs/config';
import type { AuditEnvironment } from '../config/environment/audit.environment';
import type { DatabaseEnvironment } from '../config/environment/database.environment';
import type { ServiceEnvironment } from '../config/environment/service.environment';

/** The audit feature's own variables, and the two of others it reads: where keys are kept, whether the database is shared. */
type AuditSettingsSource = AuditEnvironment & Pick<ServiceEnvironment, 'DATA_DIR'> & Pick<DatabaseEnvironment, 'DATABASE_URL'>;

/** What the audit feature is configured with, read once at start-up: its parts never read the environment. */
export abstract class AuditSettings {
  /** AUDIT_SEALING: the sealer extends the hash chain every second. */
  abstract readonly sealing: boolean;
  /** AUDIT_SEAL_MAX_LAG_SECONDS: how long an event may wait for its seal before readiness says so. */
  abstract readonly sealMaxLagSeconds: number;
  /** AUDIT_PURGE_DAILY: the retention purge runs a minute after start-up and then daily. */
  abstract readonly purgeDaily: boolean;
  /** AUDIT_RETENTION_DAYS. */
  abstract readonly retentionDays: number;
  /** AUDIT_SIGNING_KEY (PEM), when set; otherwise the key kept under DATA_DIR. */
  abstract readonly signingKey?: string;
  /** AUDIT_PUBLIC_KEYS: the retired keys the sealer still accepts as the chain it extends. */
  abstract readonly retiredPublicKeys?: string;
  abstract readonly dataDir: string;
  /** The database is an external one (DATABASE_URL), which replicas may share. */
  abstract readonly sharedDatabase: boolean;
}

export function auditSettingsOf(config: ConfigService<AuditSettingsSource, true>): AuditSettings {
  return {
    sealing: config.getOrThrow('AUDIT_SEALING', { infer: true }),
    sealMaxLagSeconds: config.getOrThrow('AUDIT_SEAL_MAX_LAG_SECONDS', { infer: true }),
    purgeDaily: config.getOrThrow('AUDIT_PURGE_DAILY', { infer: true }),
    retentionDays: config.getOrThrow('AUDIT_RETENTION_DAYS', { infer: true }),
    signingKey: config.get('AUDIT_SIGNING_KEY', { infer: true }) || undefined,
    retiredPublicKeys: config.get('AUDIT_PUBLIC_KEYS', { infer: true }) || undefined,
    dataDir: config.getOrThrow('DATA_DIR', { infer: true }),
    sharedDatabase: Boolean(config.get('DATABASE_URL', { infer: true })),
  };
}
