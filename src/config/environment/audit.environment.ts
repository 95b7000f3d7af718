import { IsOptional } from 'class-validator';
import { IsFlag, IsIntegerBetween, IsReadableBy } from '../env.validators';
import { readAuditPublicKeys, readAuditSigningKey } from '../audit-keys';

/** The audit log: its seal, its keys, its retention. */
export class AuditEnvironment {
  /** PCI DSS 10.5.1 keeps a year of audit history; the database refuses a shorter purge. */
  @IsIntegerBetween(365, 3650)
  readonly AUDIT_RETENTION_DAYS: number = 400;

  @IsFlag()
  readonly AUDIT_PURGE_DAILY: boolean = true;

  /**
   * The Ed25519 key that signs audit checkpoints (PEM text or a file's path). Unset: the key in
   * DATA_DIR/audit-signing-key.pem, made at first start. Replicas must share one.
   */
  @IsOptional()
  @IsReadableBy(readAuditSigningKey)
  readonly AUDIT_SIGNING_KEY?: string = undefined;

  /** Retired signing keys' public halves (PEM text or a file's path, one or more blocks): older checkpoints still verify. */
  @IsOptional()
  @IsReadableBy(readAuditPublicKeys)
  readonly AUDIT_PUBLIC_KEYS?: string = undefined;

  /** Seal the audit log into signed checkpoints (docs/security.md). Off only to measure what sealing costs. */
  @IsFlag()
  readonly AUDIT_SEALING: boolean = true;

  /**
   * How long an audit event may wait to be sealed (normally about a second). Beyond it, readiness and
   * /metrics say the sealer lags, and npm run audit:verify reports the events as a finding.
   */
  @IsIntegerBetween(5, 7 * 24 * 3600)
  readonly AUDIT_SEAL_MAX_LAG_SECONDS: number = 300;
}
