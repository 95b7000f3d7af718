import { Sql } from '../../database/sql';
import { SystemClock } from '../../common/domain/clock.port';
import { openDatabase } from '../../database/cli/open-database';
import { AuditRetention } from '../domain/audit-retention.service';
import { AuditEventEntity } from '../persistence/audit-event.entity';
import { TypeOrmAuditLogRepository } from '../persistence/typeorm-audit-log.repository';

export interface PurgeIo {
  out(line: string): void;
}

/**
 * `npm run audit:purge`: deletes audit events older than AUDIT_RETENTION_DAYS and prints
 * {"purged": N, "retention_days": D}. The service also runs it daily.
 */
export async function runAuditPurge(env: NodeJS.ProcessEnv, io: PurgeIo): Promise<number> {
  const database = await openDatabase(env, { migrate: true, entities: [AuditEventEntity] });
  try {
    const retention = new AuditRetention(
      new TypeOrmAuditLogRepository(database.dataSource.getRepository(AuditEventEntity), Sql.of(database.dataSource)),
      new SystemClock(),
    );
    const days = database.config.AUDIT_RETENTION_DAYS;
    const purged = await retention.purge(days);
    io.out(JSON.stringify({ purged, retention_days: days }));
    return 0;
  } finally {
    await database.close();
  }
}
