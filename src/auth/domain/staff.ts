/**
 * The company's own staff (docs/security.md, "Staff"): support, compliance and operations people
 * who use Swagger UI and the audit log. They sign in at the company's OpenID provider, apart from
 * the partners' end-user issuers; its access token names them, their groups and how they signed in.
 * Staff are accountable by name: their stable id and display name go into every audit event they
 * make (end users stay pseudonymous).
 */

import { isStaffRole, STAFF_ROLES, type StaffRole } from '../../common/domain/staff-roles';

/** What the provider's access token says of a staff member, as read from its claims (nothing decided yet). */
export interface StaffClaims {
  /** The stable id claim (STAFF_ID_CLAIM; `sub` unless set). */
  readonly id: string;
  /** `name`, else `preferred_username`, else the id. */
  readonly name: string;
  /** The values of the roles claim (STAFF_ROLES_CLAIM): strings only. */
  readonly groups: readonly string[];
  /** RFC 8176 authentication method references. */
  readonly amr: readonly string[];
  readonly acr?: string;
}

/** How the company's provider is read: which groups are which roles, and which roles need a second factor. */
export class StaffPolicy {
  constructor(
    /** The roles that need a second factor; every role unless configured otherwise (PCI DSS 8.4). */
    readonly mfaRoles: ReadonlySet<StaffRole> = new Set(STAFF_ROLES),
    /** `acr` values that show a second factor, besides `amr` (STAFF_MFA_ACR_VALUES). */
    readonly mfaAcrValues: ReadonlySet<string> = new Set(),
    /** A group (the roles claim's value) → the gateway roles it grants. Without a map, a value that is a role's name grants it. */
    readonly roleMap?: ReadonlyMap<string, readonly StaffRole[]>,
  ) {}
}

/** A staff member, as the gateway knows them once their token is verified. */
export interface StaffMember {
  readonly id: string;
  readonly name: string;
  readonly roles: readonly StaffRole[];
  /** Their sign-in showed a second factor. */
  readonly secondFactor: boolean;
}

/**
 * RFC 8176's methods, by the factor each one is: a sign-in with two of different kinds, or one the
 * provider calls `mfa`, had a second factor. `pwd` with `otp` is two; `pwd` with `kba` is not.
 */
const FACTOR_OF: ReadonlyMap<string, 'knowledge' | 'possession' | 'inherence'> = new Map([
  ['pwd', 'knowledge'],
  ['pin', 'knowledge'],
  ['kba', 'knowledge'],
  ['otp', 'possession'],
  ['hwk', 'possession'],
  ['swk', 'possession'],
  ['sms', 'possession'],
  ['tel', 'possession'],
  ['sc', 'possession'],
  ['pop', 'possession'],
  ['fpt', 'inherence'],
  ['face', 'inherence'],
  ['iris', 'inherence'],
  ['retina', 'inherence'],
  ['vbm', 'inherence'],
]);

/** Whether the sign-in showed a second factor: `amr` holds `mfa` or two factors of different kinds, or `acr` is one configured as such. */
export function showsSecondFactor(claims: Pick<StaffClaims, 'amr' | 'acr'>, acrValues: ReadonlySet<string>): boolean {
  if (claims.acr !== undefined && acrValues.has(claims.acr)) return true;
  if (claims.amr.includes('mfa')) return true;
  // A Map, not an object: `constructor` or `__proto__` in amr is no factor. `geo` (RFC 8176) is where, not who: no factor either.
  const kinds = new Set(claims.amr.map((method) => FACTOR_OF.get(method)).filter((kind) => kind !== undefined));
  return kinds.size >= 2;
}

/** The gateway roles the groups grant, in STAFF_ROLES' order; a group the map does not name grants nothing. */
export function rolesOf(groups: readonly string[], roleMap?: ReadonlyMap<string, readonly StaffRole[]>): StaffRole[] {
  const granted = new Set<StaffRole>();
  for (const group of groups) {
    if (roleMap) for (const role of roleMap.get(group) ?? []) granted.add(role);
    else if (isStaffRole(group)) granted.add(group);
  }
  return STAFF_ROLES.filter((role) => granted.has(role));
}

export function staffMemberOf(claims: StaffClaims, policy: StaffPolicy): StaffMember {
  return {
    id: claims.id,
    name: claims.name,
    roles: rolesOf(claims.groups, policy.roleMap),
    secondFactor: showsSecondFactor(claims, policy.mfaAcrValues),
  };
}

/**
 * The roles a staff member calls an operation with: theirs that the operation allows, and of those
 * only the ones their sign-in is strong enough for. `needsSecondFactor` is set when the operation
 * would be allowed with a second factor they did not show.
 */
export function rolesUsed(
  member: Pick<StaffMember, 'roles' | 'secondFactor'>,
  allowed: readonly StaffRole[],
  mfaRoles: ReadonlySet<StaffRole>,
): { roles: StaffRole[]; needsSecondFactor: boolean } {
  const matching = member.roles.filter((role) => allowed.includes(role));
  const usable = member.secondFactor ? matching : matching.filter((role) => !mfaRoles.has(role));
  return { roles: usable, needsSecondFactor: usable.length === 0 && matching.length > 0 };
}
