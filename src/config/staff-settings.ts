import { readMfaRoles, readRoleMap, type StaffRole } from '../common/domain/staff-roles';
import type { StaffEnvironment } from './environment/staff.environment';

/** The company's provider as the gateway trusts it for staff: STAFF_OIDC_ISSUER, or in sandbox mode the development staff provider. */
export interface StaffProvider {
  readonly issuer: string;
  readonly audience: string;
  readonly idClaim: string;
  readonly rolesClaim: string;
  /** Swagger UI's public client there (STAFF_OIDC_CLIENT_ID, or the development one). */
  readonly swaggerClientId?: string;
}

type StaffSettings = Pick<
  StaffEnvironment,
  | 'STAFF_OIDC_ISSUER'
  | 'STAFF_OIDC_AUDIENCE'
  | 'STAFF_OIDC_CLIENT_ID'
  | 'STAFF_ROLES_CLAIM'
  | 'STAFF_ID_CLAIM'
  | 'STAFF_ROLE_MAP'
  | 'STAFF_MFA_ROLES'
  | 'STAFF_MFA_ACR_VALUES'
>;

/** The staff provider, or undefined when there is none (no staff sign-in: admin client tokens only). */
export function staffProvider(config: StaffSettings, dev?: { readonly issuer: string; readonly swaggerClientId: string }): StaffProvider | undefined {
  const issuer = config.STAFF_OIDC_ISSUER ?? dev?.issuer;
  if (!issuer) return undefined;
  const swaggerClientId = config.STAFF_OIDC_ISSUER ? config.STAFF_OIDC_CLIENT_ID : dev?.swaggerClientId;
  return {
    issuer,
    audience: config.STAFF_OIDC_AUDIENCE,
    idClaim: config.STAFF_ID_CLAIM,
    rolesClaim: config.STAFF_ROLES_CLAIM,
    ...(swaggerClientId ? { swaggerClientId } : {}),
  };
}

/** How staff tokens are read (auth's StaffPolicy): the roles that need a second factor, the `acr` values that show one, the role map. */
export function staffPolicySettings(config: StaffSettings): {
  mfaRoles: Set<StaffRole>;
  mfaAcrValues: Set<string>;
  roleMap?: Map<string, StaffRole[]>;
} {
  const acrValues = (config.STAFF_MFA_ACR_VALUES ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  return {
    mfaRoles: readMfaRoles(config.STAFF_MFA_ROLES),
    mfaAcrValues: new Set(acrValues),
    ...(config.STAFF_ROLE_MAP ? { roleMap: readRoleMap(config.STAFF_ROLE_MAP) } : {}),
  };
}
