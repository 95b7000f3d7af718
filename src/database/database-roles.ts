import { DataSource } from 'typeorm';
import { dataSourceOptions, MIGRATION_LOCK_KEY, runMigrations } from './typeorm-options';

/**
 * Separation of duties in the database. The owner (MIGRATIONS_DATABASE_URL) runs the migrations
 * and owns the schema; the service's role (DATABASE_URL) gets, on each table, only what the
 * service does there. On the audit log that is INSERT and SELECT: no UPDATE, DELETE or TRUNCATE,
 * and, not owning it, no ALTER, DROP or switching its triggers off. The retention purge is the
 * owner's SECURITY DEFINER function, which the service may only call.
 *
 * A table the migrations add must be named here; a test holds the two in step.
 */
export const SERVICE_PRIVILEGES: Readonly<Record<string, string>> = {
  // INSERT on every column but those the database sets (DATABASE_SET_COLUMNS).
  audit_events: 'SELECT, INSERT',
  // The sealer appends checkpoints and their manifests through the owner's append_audit_checkpoint,
  // which keeps them in sequence and on the chain; only the owner's purge removes any (never the newest).
  audit_checkpoints: 'SELECT',
  audit_manifests: 'SELECT',
  // The log's tree of checkpoint heads: written only by the owner's trigger as a checkpoint is appended.
  audit_log_tree: 'SELECT',
  // Purges not yet recorded by their checkpoint, within the purging transaction only.
  audit_purges_unrecorded: 'SELECT',
  // The retention the purge enforces, set by the owner from AUDIT_RETENTION_DAYS.
  audit_policy: 'SELECT',
  // The service reads its callers; creating, revoking and changing them is the owner's (npm run clients).
  api_clients: 'SELECT',
  idempotency_keys: 'SELECT, INSERT, UPDATE, DELETE',
  customer_tenants: 'SELECT, INSERT, UPDATE, DELETE',
  // Accounts are recorded once and their sealed identifiers sealed again under a new DATA_KEY; none is deleted.
  bank_accounts: 'SELECT, INSERT, UPDATE',
  // What a data upgrade did (the accounts reconstructed at the first start after their migration), written once.
  data_upgrades: 'SELECT, INSERT',
  dpop_proofs: 'SELECT, INSERT, UPDATE, DELETE',
  browser_logins: 'SELECT, INSERT, DELETE',
  browser_sessions: 'SELECT, INSERT, UPDATE, DELETE',
  // Events are facts, written once and never changed (a trigger refuses it).
  partner_events: 'SELECT, INSERT',
  webhook_endpoints: 'SELECT, INSERT, UPDATE, DELETE',
  webhook_deliveries: 'SELECT, INSERT, UPDATE, DELETE',
  webhook_attempts: 'SELECT, INSERT, DELETE',
  // Made once by the first process that signs, never changed.
  webhook_signing_keys: 'SELECT, INSERT',
  // Each delivering process's heartbeat, and the removal of the dead ones'.
  job_workers: 'SELECT, INSERT, UPDATE, DELETE',
  // So that a tool run with DATABASE_URL alone sees that nothing is pending.
  schema_migrations: 'SELECT',
};

/**
 * Columns the database sets and the service's role may not write: when an event occurred and the
 * transaction that wrote it (its place in seal order). A role that could write them could date an
 * event into a purged past, or place it behind a seal.
 */
export const DATABASE_SET_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  audit_events: ['occurred_at', 'tx'],
};

/** Functions the service calls (their migrations revoke EXECUTE from PUBLIC). */
export const SERVICE_FUNCTIONS: readonly string[] = [
  'purge_sealed_audit_events(timestamptz, integer)',
  'append_audit_checkpoint(text, character varying, bytea, bytea)',
  'audit_log_root(bigint)',
  // A webhook delivery's attempt asked of the job engine, whose tables are the owner's alone.
  'webhook_attempt_due(uuid, timestamp with time zone)',
];

/** What the owner sets at start-up besides the grants. */
export interface OwnerPolicy {
  /** AUDIT_RETENTION_DAYS: the purge refuses a younger cutoff. */
  readonly auditRetentionDays: number;
}

/** The database's URLs: the service's role, and the schema owner's when it is another role. */
export interface DatabaseUrls {
  readonly url: string;
  readonly ownerUrl?: string;
}

/** How the service's role stands towards the audit log, as /health/ready and start-up report it. */
export interface AuditLogProtection {
  /** True when the service's role neither owns the audit log nor is a superuser. */
  readonly separated: boolean;
  /** The service's role, and why it is not separated when it is not. */
  readonly role: string;
  readonly reason?: string;
}

/** The provider of AuditLogProtection, worked out once at start-up. */
export class DatabaseRoles {
  constructor(readonly protection: AuditLogProtection) {}
}

/** Grants the service's role its privileges. Run by the owner, after the migrations. */
export async function grantServicePrivileges(owner: DataSource, serviceRole: string): Promise<void> {
  const role = quoteIdentifier(serviceRole);
  await owner.transaction(async (manager) => {
    // Replicas starting together would otherwise change the same grants at once.
    await manager.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    for (const [table, privileges] of Object.entries(SERVICE_PRIVILEGES)) {
      // Revoking the table's privileges revokes its columns' too.
      await manager.query(`REVOKE ALL ON ${quoteIdentifier(table)} FROM ${role}`);
      const setByDatabase = DATABASE_SET_COLUMNS[table];
      const listed = privileges.split(',').map((p) => p.trim());
      const wholeTable = setByDatabase ? listed.filter((p) => p !== 'INSERT') : listed;
      if (wholeTable.length > 0) await manager.query(`GRANT ${wholeTable.join(', ')} ON ${quoteIdentifier(table)} TO ${role}`);
      if (setByDatabase && listed.includes('INSERT')) {
        const columns: { name: string }[] = await manager.query(
          `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
          [table],
        );
        const writable = columns.map((c) => c.name).filter((name) => !setByDatabase.includes(name));
        await manager.query(`GRANT INSERT (${writable.map(quoteIdentifier).join(', ')}) ON ${quoteIdentifier(table)} TO ${role}`);
      }
    }
    await manager.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    for (const fn of SERVICE_FUNCTIONS) {
      await manager.query(`GRANT EXECUTE ON FUNCTION ${fn} TO ${role}`);
    }
    await grantJobEngine(manager, role);
  });
}

/**
 * The job engine's schema (graphile-worker's, installed by the owner with the migrations) for the
 * service's role, which runs it: its jobs, queues and tasks, and its functions. Its tables refuse
 * every role but their owner (row-level security, as graphile-worker sets them): a policy per table
 * lets the service's role in, and no further than those tables, which hold jobs, never partners' data.
 */
async function grantJobEngine(manager: { query(sql: string, values?: unknown[]): Promise<unknown> }, role: string): Promise<void> {
  await manager.query(`GRANT USAGE ON SCHEMA ${JOB_ENGINE_SCHEMA} TO ${role}`);
  await manager.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${JOB_ENGINE_SCHEMA} TO ${role}`);
  await manager.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${JOB_ENGINE_SCHEMA} TO ${role}`);
  await manager.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${JOB_ENGINE_SCHEMA} TO ${role}`);
  const guarded = (await manager.query(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relrowsecurity`,
    [JOB_ENGINE_SCHEMA],
  )) as { name: string }[];
  for (const { name } of guarded) {
    const table = `${JOB_ENGINE_SCHEMA}.${quoteIdentifier(name)}`;
    await manager.query(`DROP POLICY IF EXISTS service_runs_jobs ON ${table}`);
    await manager.query(`CREATE POLICY service_runs_jobs ON ${table} TO ${role} USING (true) WITH CHECK (true)`);
  }
}

/** graphile-worker's schema (its default name). */
const JOB_ENGINE_SCHEMA = 'graphile_worker';

/**
 * Applies pending migrations as the owner and grants the service's role (`service`, connected
 * with DATABASE_URL) its privileges. With one URL for both, the migrations run as the service's
 * role and nothing is granted: see protectionOf.
 */
export async function migrateAsOwner(service: DataSource, ownerUrl: string | undefined, policy?: OwnerPolicy): Promise<string[]> {
  if (!ownerUrl) {
    const applied = await runMigrations(service);
    // With one URL, its role sets the policy only when it owns it (a development database); a
    // separated service's role reads the one its owner set.
    const [{ may }]: { may: boolean }[] = await service.query(`SELECT has_table_privilege('audit_policy', 'UPDATE') AS may`);
    if (policy && may) await setOwnerPolicy(service, policy);
    return applied;
  }
  const owner = await new DataSource(dataSourceOptions(ownerUrl, { poolSize: 2 })).initialize();
  try {
    const applied = await runMigrations(owner);
    const serviceRole = await currentRole(service);
    if (serviceRole !== (await currentRole(owner))) await grantServicePrivileges(owner, serviceRole);
    if (policy) await setOwnerPolicy(owner, policy);
    return applied;
  } finally {
    await owner.destroy();
  }
}

/** The retention the purge enforces (audit_policy): only the owner may set it. */
export async function setOwnerPolicy(owner: DataSource, policy: OwnerPolicy): Promise<void> {
  await owner.query('UPDATE audit_policy SET retention_days = $1', [policy.auditRetentionDays]);
}

/**
 * Whether the service's role could rewrite the audit log: it owns it, is a superuser, owns the
 * database or the schema, or may create objects in the schema (PostgreSQL before 15 lets everyone).
 */
export async function protectionOf(service: DataSource): Promise<AuditLogProtection> {
  const [row]: { role: string; superuser: boolean; owns: boolean; ownsDatabase: boolean; ownsSchema: boolean; creates: boolean }[] = await service.query(
    `SELECT current_user AS role,
            (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
            pg_has_role(current_user, c.relowner, 'USAGE') AS owns,
            pg_has_role(current_user, (SELECT d.datdba FROM pg_database d WHERE d.datname = current_database()), 'USAGE') AS "ownsDatabase",
            pg_has_role(current_user, n.nspowner, 'USAGE') AS "ownsSchema",
            has_schema_privilege(current_user, n.oid, 'CREATE') AS creates
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass('audit_events')`,
  );
  if (!row) return { separated: false, role: await currentRole(service), reason: 'the audit log does not exist yet' };
  if (row.superuser) return { separated: false, role: row.role, reason: 'the service connects as a superuser' };
  if (row.owns) return { separated: false, role: row.role, reason: 'the service connects as the owner of the audit log' };
  // Owning the database or the schema (PostgreSQL 15's pg_database_owner owns public), it could drop the audit log's tables.
  if (row.ownsDatabase) return { separated: false, role: row.role, reason: "the service's role owns the database" };
  if (row.ownsSchema) return { separated: false, role: row.role, reason: "the service's role owns the audit log's schema" };
  if (row.creates) {
    return {
      separated: false,
      role: row.role,
      reason: "the service's role may create objects in the audit log's schema (REVOKE CREATE ON SCHEMA public FROM PUBLIC, as PostgreSQL 15 does by default)",
    };
  }
  return { separated: true, role: row.role };
}

async function currentRole(dataSource: DataSource): Promise<string> {
  const [{ role }]: { role: string }[] = await dataSource.query('SELECT current_user AS role');
  return role;
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
