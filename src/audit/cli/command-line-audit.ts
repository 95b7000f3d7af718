import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import type { EntityManager } from 'typeorm';
import type { AuditOperation } from '../../common/domain/audit-operations';
import type { TerminalPhase } from '../trail/domain/audit-event';
import { AuditEventEntity } from '../trail/persistence/audit-event.entity';
import { AuditEventMapper } from '../trail/persistence/audit-event.mapper';

/** What a command changed, and how it ended. Identifiers only, as every audit event. */
export interface CommandLineChange {
  readonly operation: AuditOperation;
  readonly phase: TerminalPhase;
  /** The command as typed, without its values: `customers link`. */
  readonly command: string;
  readonly customerId?: string;
  readonly tenant?: string;
  readonly errorCode?: string;
  readonly errorMessage?: string;
}

/** Who ran a command: the operating-system account (the audit's "who" for changes made outside the API). */
export function commandLineActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli:unknown';
  }
}

/**
 * Records a change made from the command line in the audit log, in the caller's transaction, so
 * that the change and its event commit together or not at all. The event is sealed like any other.
 */
export async function auditCommandLineChange(manager: EntityManager, change: CommandLineChange): Promise<void> {
  const row = AuditEventMapper.toRow({
    id: randomUUID(),
    occurredAt: new Date(),
    requestId: randomUUID(),
    operation: change.operation,
    phase: change.phase,
    clientName: commandLineActor(),
    tenant: change.tenant,
    customerId: change.customerId,
    route: `cli: ${change.command}`,
    errorCode: change.errorCode,
    errorMessage: change.errorMessage,
  });
  await manager.getRepository(AuditEventEntity).insert(row);
}
