import { IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { readMfaRoles, readRoleMap } from '../../common/domain/staff-roles';
import { IsIntegerBetween, IsReadableBy, IsUrlWithProtocol } from '../env.validators';

/**
 * Staff: the company's own OpenID provider, where support, compliance and operations people sign
 * in (docs/operations.md, "Staff sign-in"), configured apart from the partners' end-user issuers.
 */
export class StaffEnvironment {
  /**
   * The company's OpenID provider (Entra ID, Okta, Keycloak…), whose access tokens identify staff.
   * Its discovery document is read from `<issuer>/.well-known/openid-configuration`. Unset in live
   * mode: no staff sign-in (admin client tokens only). Unset in sandbox mode: the development staff
   * provider the service starts (DEV_STAFF_OIDC_PORT). Never one of the end users' issuers.
   */
  @IsOptional()
  @IsUrlWithProtocol(['http:', 'https:'])
  readonly STAFF_OIDC_ISSUER?: string = undefined;

  /** The `aud` staff access tokens name this service by: apart from OIDC_AUDIENCE, so that no end-user token is ever a staff one. */
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  readonly STAFF_OIDC_AUDIENCE: string = 'urn:partner-gateway:staff';

  /** Swagger UI's client at the staff provider: a public client, authorization code with PKCE, redirecting to `<origin>/oauth2-redirect.html`. */
  @IsOptional()
  @Matches(/^[\x21-\x7e]{1,200}$/, { message: '$property must be 1-200 visible ASCII characters' })
  readonly STAFF_OIDC_CLIENT_ID?: string = undefined;

  /** The claim of the staff access token that carries their roles or groups (a string or a list of strings); a dotted path reaches into objects (`realm_access.roles`). */
  @Matches(/^[A-Za-z0-9_:.-]{1,100}$/, { message: '$property must be a claim name (letters, digits, _ : . -)' })
  readonly STAFF_ROLES_CLAIM: string = 'roles';

  /**
   * Which of the claim's values grant which gateway role: a JSON object from a group to a role or a
   * list of roles (support, compliance, operator), such as `{"gw-support": "support", "gw-admins":
   * ["operator", "compliance"]}`. Unset: a value that is a role's own name grants that role.
   */
  @IsOptional()
  @IsReadableBy(readRoleMap)
  readonly STAFF_ROLE_MAP?: string = undefined;

  /** The roles that need a second factor at sign-in (`amr`, or STAFF_MFA_ACR_VALUES): comma-separated; empty for none. */
  @IsReadableBy(readMfaRoles)
  readonly STAFF_MFA_ROLES: string = 'support,compliance,operator';

  /** `acr` values that show a second factor, comma-separated, where the provider says so in `acr` rather than `amr`. */
  @IsOptional()
  @Matches(/^[\x21\x23-\x5b\x5d-\x7e]{1,500}$/, { message: '$property must be a comma-separated list of acr values (visible ASCII, no quotes or backslashes)' })
  readonly STAFF_MFA_ACR_VALUES?: string = undefined;

  /** The claim holding a staff member's stable id (`sub`; Entra ID's `oid`): what the audit log names them by. */
  @Matches(/^[A-Za-z0-9_:-]{1,100}$/, { message: '$property must be a claim name' })
  readonly STAFF_ID_CLAIM: string = 'sub';

  /** How long an admin client token made without an expiry lasts (hours): admin tokens are for automation and emergencies (break-glass). */
  @IsIntegerBetween(1, 720)
  readonly ADMIN_TOKEN_DEFAULT_TTL_HOURS: number = 8;
}
