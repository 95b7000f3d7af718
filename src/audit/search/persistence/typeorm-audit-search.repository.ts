import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUuid } from '../../../common/domain/identifiers';
import { OPERATION } from '../../../common/domain/audit-operations';
import { unavailableOnOutage } from '../../../database/store-errors';
import { AuditEvent, AuditEventFilter, AuditPage, AuditPosition } from '../../trail/domain/audit-event';
import { AuditEventEntity } from '../../trail/persistence/audit-event.entity';
import { AuditEventMapper } from '../../trail/persistence/audit-event.mapper';
import { POSITION_SQL } from '../../trail/persistence/typeorm-audit-log.repository';
import { AuditSearch } from '../domain/audit-search.port';

/** The search over audit_events: filters on the indexed columns, newest first, keyset pages. */
@Injectable()
export class TypeOrmAuditSearchRepository extends AuditSearch {
  constructor(@InjectRepository(AuditEventEntity) private readonly rows: Repository<AuditEventEntity>) {
    super();
  }

  async find(filter: AuditEventFilter, limit: number, after?: AuditPosition): Promise<AuditPage> {
    const query = this.rows.createQueryBuilder('e').addSelect(POSITION_SQL, 'position');
    if (filter.reference) query.andWhere('e.reference = :reference', { reference: filter.reference });
    if (filter.customerId) query.andWhere('e.customer_id = :customerId', { customerId: filter.customerId });
    if (filter.clientId) query.andWhere('e.client_id = :clientId', { clientId: filter.clientId });
    if (filter.staffId) query.andWhere('e.staff_id = :staffId', { staffId: filter.staffId });
    if (filter.operation) query.andWhere('e.operation = :operation', { operation: filter.operation });
    // A search names the reference or customer it looked at: a customer's events are theirs, not the searches about them (operation=audit.query finds those).
    else if (filter.reference || filter.customerId) query.andWhere('e.operation <> :search', { search: OPERATION.queryAudit });
    if (filter.phase) query.andWhere('e.phase = :phase', { phase: filter.phase });
    if (filter.from) query.andWhere('e.occurred_at >= :from', { from: filter.from });
    if (filter.to) query.andWhere('e.occurred_at < :to', { to: filter.to });
    if (filter.errorId) {
      if (isUuid(filter.errorId)) {
        query.andWhere('(e.error_id = :ourErrorId OR e.upstream_error_id = :errorId)', { ourErrorId: filter.errorId, errorId: filter.errorId });
      } else {
        query.andWhere('e.upstream_error_id = :errorId', { errorId: filter.errorId });
      }
    }
    if (after) {
      query.andWhere('(e.occurred_at, e.id) < (CAST(:afterAt AS timestamptz), CAST(:afterId AS uuid))', { afterAt: after.occurredAt, afterId: after.id });
    }
    query
      .orderBy('e.occurred_at', 'DESC')
      .addOrderBy('e.id', 'DESC')
      .limit(limit + 1);

    const { entities, raw } = await unavailableOnOutage(() => query.getRawAndEntities<{ position: string }>());
    const events = entities.slice(0, limit).map((row) => AuditEventMapper.toDomain(row));
    if (entities.length <= limit) return { events };
    const last = entities[limit - 1];
    const lastRaw = raw[limit - 1];
    return { events, next: { occurredAt: lastRaw.position, id: last.id } };
  }

  async get(id: string): Promise<AuditEvent | undefined> {
    const row = await unavailableOnOutage(() => this.rows.findOneBy({ id }));
    return row ? AuditEventMapper.toDomain(row) : undefined;
  }
}
