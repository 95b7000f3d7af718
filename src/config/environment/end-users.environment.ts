import { IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { IsFlag, IsIntegerBetween, IsReadableBy, IsUrlWithProtocol } from '../env.validators';
import { readExtraIssuers, readSecretKey } from '../end-user-settings';

/** End users: the OpenID providers whose access tokens the gateway accepts, and what it knows them by. */
export class EndUserEnvironment {
  /**
   * The partner's OpenID provider, whose access tokens identify end users (docs/security.md, "End
   * users"). Its discovery document is read from `<issuer>/.well-known/openid-configuration`.
   * Unset in live mode: only partner and admin client tokens are accepted. Unset in sandbox mode:
   * the development OpenID provider the service starts (DEV_OIDC_PORT).
   */
  @IsOptional()
  @IsUrlWithProtocol(['http:', 'https:'])
  readonly OIDC_ISSUER?: string = undefined;

  /** The `aud` the issuer's access tokens name this service by (RFC 9068; the resource indicator, RFC 8707). */
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  readonly OIDC_AUDIENCE: string = 'urn:partner-gateway';

  /** The tenant OIDC_ISSUER's end users belong to. */
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: '$property must be 1-64 letters, digits, dots, dashes or underscores' })
  readonly OIDC_TENANT: string = 'default';

  /** More issuers, each with its own tenant and audience: a JSON list of {"issuer", "audience", "tenant"}. */
  @IsOptional()
  @IsReadableBy(readExtraIssuers)
  readonly OIDC_ISSUERS?: string = undefined;

  /** FAPI 2.0 mode: an end-user token must be bound to a key (DPoP, RFC 9449); bearer end-user tokens are refused. */
  @IsFlag()
  readonly OIDC_REQUIRE_DPOP: boolean = false;

  /** Leeway for the clocks of the issuer, the apps and this service (exp, nbf, iat; DPoP proofs' iat). */
  @IsIntegerBetween(0, 300)
  readonly OIDC_CLOCK_SKEW_SECONDS: number = 30;

  /** Access tokens that live longer than this (exp - iat) are refused, however they are signed. */
  @IsIntegerBetween(60, 86_400)
  readonly OIDC_MAX_TOKEN_LIFETIME_SECONDS: number = 3600;

  /** How old a DPoP proof may be (its iat); its jti is remembered, across replicas, for this long plus the skew. */
  @IsIntegerBetween(5, 600)
  readonly DPOP_PROOF_MAX_AGE_SECONDS: number = 60;

  /**
   * Where the DPoP proofs used are remembered, when not in PostgreSQL: a Redis every replica shares
   * (`redis://` or `rediss://`). Unset: PostgreSQL (durable; one INSERT per proof, group-committed).
   * With Redis a proof costs far less, and a Redis that loses its data forgets the proofs of the
   * last DPOP_PROOF_MAX_AGE_SECONDS (docs/security.md, "DPoP").
   */
  @IsOptional()
  @IsUrlWithProtocol(['redis:', 'rediss:'])
  readonly DPOP_REPLAY_REDIS_URL?: string = undefined;

  /**
   * The key of the end users' pseudonyms (HMAC-SHA256 of issuer and subject): what the audit log,
   * the idempotency store and customer ownership know an end user by. 32 bytes or more, base64 or
   * a file's path. Unset: DATA_DIR/end-user-pseudonym.key, made at first start. Replicas must share
   * one, and it must never change: a new key makes every end user a stranger to their customers.
   */
  @IsOptional()
  @IsReadableBy(readSecretKey)
  readonly END_USER_PSEUDONYM_KEY?: string = undefined;
}
