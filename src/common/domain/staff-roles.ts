/** The staff roles' names, and how the settings that name them are read (config and auth share them). */

/**
 * What a staff member may do, least privilege first: each staff operation names the roles that may
 * call it (@Staff on its route, read at start; the OpenAPI document shows them).
 * - support: the audit search, unresolved calls, a customer's requests;
 * - compliance: the same reads, and checkpoints, verification, the access report;
 * - operator: partner clients, end users' sessions, reconciliation, the service's details.
 */
export const STAFF_ROLES = ['support', 'compliance', 'operator'] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

export function isStaffRole(value: unknown): value is StaffRole {
  return typeof value === 'string' && (STAFF_ROLES as readonly string[]).includes(value);
}

/** STAFF_ROLE_MAP: a JSON object from a group (the claim's value) to a role or a list of roles. Throws with a reason. */
export function readRoleMap(value: string): Map<string, StaffRole[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error('must be a JSON object from a group to a role or a list of roles');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('must be a JSON object from a group to a role or a list of roles');
  const map = new Map<string, StaffRole[]>();
  for (const [group, roles] of Object.entries(parsed as Record<string, unknown>)) {
    const list = Array.isArray(roles) ? roles : [roles];
    if (group.length === 0 || group.length > 256) throw new Error('must name each group with 1-256 characters');
    if (list.length === 0 || !list.every(isStaffRole)) throw new Error(`must map each group to roles among ${STAFF_ROLES.join(', ')}`);
    map.set(group, [...new Set(list)]);
  }
  return map;
}

/** STAFF_MFA_ROLES: a comma-separated list of roles (empty: none). Throws with a reason. */
export function readMfaRoles(value: string): Set<StaffRole> {
  const roles = value
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
  const unknown = roles.filter((role) => !isStaffRole(role));
  if (unknown.length > 0) throw new Error(`must list roles among ${STAFF_ROLES.join(', ')}`);
  return new Set(roles as StaffRole[]);
}
