import { SystemClock } from '../../common/domain/clock.port';
import { Sql } from '../../database/sql';
import { openDatabase } from '../../database/cli/open-database';
import { AuditRetention } from '../retention/domain/audit-retention.service';
import { AuditSealer } from '../seal/domain/audit-sealer.service';
import { PostgresAuditSealRepository } from '../seal/persistence/postgres-audit-seal.repository';
import { Ed25519CheckpointSigner, loadSigningKey, loadTrustedKeys } from '../seal/signing/audit-signing-keys';

export interface PurgeIo {
  out(line: string): void;
}

/**
 * `npm run audit:purge`: seals what is waiting, then deletes the sealed audit events older than
 * AUDIT_RETENTION_DAYS (whole checkpoints, each purge recorded by a signed checkpoint) and prints
 * {"purged": N, "retention_days": D}. The service also runs it daily.
 */
export async function runAuditPurge(env: NodeJS.ProcessEnv, io: PurgeIo): Promise<number> {
  const database = await openDatabase(env, { migrate: true });
  try {
    const signer = new Ed25519CheckpointSigner(loadSigningKey(database.config, { make: false }).key);
    const sealer = new AuditSealer(new PostgresAuditSealRepository(Sql.of(database.dataSource)), signer, loadTrustedKeys(database.config), new SystemClock());
    await sealer.sealPending();
    const days = database.config.AUDIT_RETENTION_DAYS;
    const purged = await new AuditRetention(sealer, new SystemClock()).purge(days);
    io.out(JSON.stringify({ purged, retention_days: days }));
    return 0;
  } finally {
    await database.close();
  }
}
