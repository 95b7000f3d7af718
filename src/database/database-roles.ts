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
  audit_events: 'SELECT, INSERT',
  // The sealer appends checkpoints and their manifests; only the owner's purge removes any.
  audit_checkpoints: 'SELECT, INSERT',
  audit_manifests: 'SELECT, INSERT',
  api_clients: 'SELECT, INSERT, UPDATE',
  idempotency_keys: 'SELECT, INSERT, UPDATE, DELETE',
  customer_tenants: 'SELECT, INSERT, UPDATE, DELETE',
  dpop_proofs: 'SELECT, INSERT, UPDATE, DELETE',
  browser_logins: 'SELECT, INSERT, DELETE',
  browser_sessions: 'SELECT, INSERT, UPDATE, DELETE',
  // So that a tool run with DATABASE_URL alone sees that nothing is pending.
  schema_migrations: 'SELECT',
};

/** Functions the service calls (their migrations revoke EXECUTE from PUBLIC). */
export const SERVICE_FUNCTIONS: readonly string[] = ['purge_sealed_audit_events(timestamptz, integer)'];

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
      await manager.query(`REVOKE ALL ON ${quoteIdentifier(table)} FROM ${role}`);
      await manager.query(`GRANT ${privileges} ON ${quoteIdentifier(table)} TO ${role}`);
    }
    await manager.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    for (const fn of SERVICE_FUNCTIONS) {
      await manager.query(`GRANT EXECUTE ON FUNCTION ${fn} TO ${role}`);
    }
  });
}

/**
 * Applies pending migrations as the owner and grants the service's role (`service`, connected
 * with DATABASE_URL) its privileges. With one URL for both, the migrations run as the service's
 * role and nothing is granted: see protectionOf.
 */
export async function migrateAsOwner(service: DataSource, ownerUrl: string | undefined): Promise<string[]> {
  if (!ownerUrl) return runMigrations(service);
  const owner = await new DataSource(dataSourceOptions(ownerUrl, { poolSize: 2 })).initialize();
  try {
    const applied = await runMigrations(owner);
    const serviceRole = await currentRole(service);
    if (serviceRole !== (await currentRole(owner))) await grantServicePrivileges(owner, serviceRole);
    return applied;
  } finally {
    await owner.destroy();
  }
}

/** Whether the service's role could rewrite the audit log: it owns it, or it is a superuser. */
export async function protectionOf(service: DataSource): Promise<AuditLogProtection> {
  const [row]: { role: string; superuser: boolean; owns: boolean }[] = await service.query(
    `SELECT current_user AS role,
            (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
            pg_has_role(current_user, c.relowner, 'USAGE') AS owns
       FROM pg_class c WHERE c.oid = to_regclass('audit_events')`,
  );
  if (!row) return { separated: false, role: await currentRole(service), reason: 'the audit log does not exist yet' };
  if (row.superuser) return { separated: false, role: row.role, reason: 'the service connects as a superuser' };
  if (row.owns) return { separated: false, role: row.role, reason: 'the service connects as the owner of the audit log' };
  return { separated: true, role: row.role };
}

async function currentRole(dataSource: DataSource): Promise<string> {
  const [{ role }]: { role: string }[] = await dataSource.query('SELECT current_user AS role');
  return role;
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
