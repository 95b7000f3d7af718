import { importJWK, JWK, jwtVerify } from 'jose';
import { Logger } from '@nestjs/common';
import * as client from 'openid-client';
import { PARTNER_SCOPES } from '../../partner-api/domain/partner-api.vocabulary';
import { InvalidLogoutToken, IssuerUnavailable, LoginFailed } from '../domain/auth.errors';
import {
  CompletedLogin,
  DisplayClaims,
  ExpectedCallback,
  LoginStart,
  LogoutNotice,
  RefreshRefused,
  RelyingParty,
  SessionTokens,
} from '../domain/relying-party.port';
import type { SessionSettings } from '../../config/end-user-settings';
import { IssuerDirectory, IssuerKeys, IssuerMetadata, isLoopbackHttp, timedOut } from './issuer-metadata';

/** How long a call to the provider may take, in seconds (openid-client's timeout). */
const TIMEOUT_SECONDS = 5;
/** How old a logout token may be (its iat), and the clocks' leeway, in seconds. */
const LOGOUT_TOKEN_MAX_AGE_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 30;
const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * This service as a confidential client of the partner's OpenID provider, with openid-client
 * (panva's OpenID Certified relying-party library): discovery, authorization code + PKCE (S256) +
 * state + nonce, pushed authorization requests (RFC 9126) whenever the provider advertises them,
 * client_secret_basic or private_key_jwt, the ID token validated (iss, aud, exp, nonce; received from the token endpoint over TLS, its signature is not checked, as OpenID Connect Core 3.1.3.7 allows),
 * refresh, RP-initiated logout. Logout tokens are verified with jose against the provider's keys.
 * The provider's discovery document and keys come from the IssuerDirectory the access-token verifier
 * reads too (one cache of each per issuer, when the module gives both the same directory).
 */
export class OpenIdRelyingParty extends RelyingParty {
  readonly issuer: string;
  /** openid-client's view of the provider, made from the directory's document, again when the directory reads a new one. */
  private configuration?: { readonly metadata: IssuerMetadata; readonly config: client.Configuration };
  private authentication?: Promise<client.ClientAuth>;
  private readonly logger = new Logger('Sessions');

  constructor(
    private readonly settings: Pick<SessionSettings, 'issuer' | 'clientId'> & { readonly clientAuth: SessionSettings['clientAuth'] | { readonly none: true } },
    /** The resource the access tokens are for (OIDC_AUDIENCE, RFC 8707); undefined, none is named (the provider's default audience). */
    private readonly resource: string | undefined,
    private readonly directory = new IssuerDirectory(),
    /** The scopes a login asks for, of those the provider offers: an end user's (the gateway's scopes, a refresh token) unless said. */
    private readonly scopesOf: (offered: readonly string[] | undefined) => string[] = endUserScopes,
  ) {
    super();
    this.issuer = settings.issuer;
  }

  /** @throws IssuerUnavailable. */
  private async config(): Promise<client.Configuration> {
    const metadata = await this.directory.metadataOf(this.issuer);
    const known = this.configuration;
    if (known?.metadata === metadata) return known.config;
    const config = new client.Configuration(metadata.document as client.ServerMetadata, this.settings.clientId, undefined, await this.clientAuthentication());
    config.timeout = TIMEOUT_SECONDS;
    // The directory reads a provider over TLS, or over plain HTTP on loopback (the development provider, tests): openid-client is told of the latter.
    if (isLoopbackHttp(new URL(this.issuer))) client.allowInsecureRequests(config);
    this.configuration = { metadata, config };
    return config;
  }

  /** How this client authenticates to the provider, made once. */
  private clientAuthentication(): Promise<client.ClientAuth> {
    const auth = this.settings.clientAuth;
    this.authentication ??=
      'none' in auth
        ? Promise.resolve(client.None())
        : 'secret' in auth
          ? Promise.resolve(client.ClientSecretBasic(auth.secret))
          : importJWK(auth.privateJwk as JWK, auth.privateJwk.alg).then(
              (key) => client.PrivateKeyJwt({ key: key as client.CryptoKey, kid: auth.privateJwk.kid }),
              (error: unknown) => {
                this.logger.warn({ issuer: this.issuer, reason: describe(error) }, 'The client’s private key (OIDC_CLIENT_PRIVATE_KEY) cannot be used');
                throw new IssuerUnavailable(error);
              },
            );
    return this.authentication;
  }

  async startLogin(redirectUri: string): Promise<LoginStart> {
    const config = await this.config();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const scope = this.scopesOf(config.serverMetadata().scopes_supported).join(' ');
    const parameters = {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...(this.resource === undefined ? {} : { resource: this.resource }),
    };
    let url: URL;
    try {
      url = config.serverMetadata().pushed_authorization_request_endpoint
        ? await client.buildAuthorizationUrlWithPAR(config, parameters)
        : client.buildAuthorizationUrl(config, parameters);
    } catch (error) {
      // A refused pushed request is the service's configuration (its client, its key), not the user's doing.
      this.logger.warn({ issuer: this.issuer, reason: describe(error) }, 'The OpenID provider refused the authorization request');
      throw new IssuerUnavailable(error);
    }
    return { url: url.href, state, nonce, codeVerifier };
  }

  async finishLogin(callbackUrl: URL, expected: ExpectedCallback): Promise<CompletedLogin> {
    const config = await this.config();
    let tokens;
    try {
      tokens = await client.authorizationCodeGrant(
        config,
        callbackUrl,
        { pkceCodeVerifier: expected.codeVerifier, expectedState: expected.state, expectedNonce: expected.nonce, idTokenExpected: true },
        { redirect_uri: expected.redirectUri, ...(this.resource === undefined ? {} : { resource: this.resource }) },
      );
    } catch (error) {
      throw new LoginFailed(reasonOf(error), error);
    }
    const claims = tokens.claims();
    if (!claims || typeof claims.sub !== 'string') throw new LoginFailed('The provider returned no ID token');
    return {
      ...tokensOf(tokens),
      subject: claims.sub,
      sid: typeof claims.sid === 'string' ? claims.sid : undefined,
      displayClaims: displayClaimsOf(claims),
    };
  }

  async refresh(refreshToken: string): Promise<SessionTokens> {
    const config = await this.config();
    try {
      return tokensOf(await client.refreshTokenGrant(config, refreshToken, this.resource === undefined ? {} : { resource: this.resource }));
    } catch (error) {
      // The provider answered, and said no (invalid_grant and the like); anything else is the provider not answering.
      if (error instanceof client.ResponseBodyError) throw new RefreshRefused(error);
      throw new IssuerUnavailable(error);
    }
  }

  async logoutUrl(postLogoutRedirectUri: string): Promise<string | undefined> {
    const config = await this.config();
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    // No id_token_hint: the browser never sees a token. The provider identifies the client and asks the user.
    return client.buildEndSessionUrl(config, { client_id: this.settings.clientId, post_logout_redirect_uri: postLogoutRedirectUri }).href;
  }

  async revoke(refreshToken: string): Promise<void> {
    const config = await this.config();
    if (!config.serverMetadata().revocation_endpoint) return;
    try {
      await client.tokenRevocation(config, refreshToken, { token_type_hint: 'refresh_token' });
    } catch (error) {
      throw new IssuerUnavailable(error);
    }
  }

  async readLogoutToken(token: string): Promise<LogoutNotice> {
    if (typeof token !== 'string' || token.length === 0 || token.length > 8192) throw new InvalidLogoutToken('Send one logout_token');
    let payload;
    try {
      const { keys, algorithms }: IssuerKeys = await this.directory.keysOf(this.issuer);
      const verified = await jwtVerify(token, keys, {
        issuer: this.issuer,
        audience: this.settings.clientId,
        algorithms,
        maxTokenAge: LOGOUT_TOKEN_MAX_AGE_SECONDS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ['iat', 'jti'],
      });
      if (verified.protectedHeader.typ !== undefined && verified.protectedHeader.typ.toLowerCase() !== 'logout+jwt') throw new Error('typ');
      payload = verified.payload;
    } catch (error) {
      // A provider that did not answer in time may answer the same logout again later (503); any
      // other failure to read its document or keys is a logout that failed, and 400 tells it so.
      if (error instanceof IssuerUnavailable && timedOut(error)) throw error;
      if (error instanceof IssuerUnavailable) throw new InvalidLogoutToken('The provider’s keys could not be read to verify the logout token', error);
      throw new InvalidLogoutToken('The logout token is not signed by the provider for this client, or has expired', error);
    }
    const events = payload.events as Record<string, unknown> | undefined;
    if (typeof events !== 'object' || events === null || typeof events[BACKCHANNEL_LOGOUT_EVENT] !== 'object') {
      throw new InvalidLogoutToken('The logout token has no back-channel logout event');
    }
    if (payload.nonce !== undefined) throw new InvalidLogoutToken('A logout token has no nonce');
    const subject = typeof payload.sub === 'string' ? payload.sub : undefined;
    const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
    if (subject === undefined && sid === undefined) throw new InvalidLogoutToken('The logout token names neither sub nor sid');
    const expiresAt = new Date(((payload.exp ?? payload.iat! + LOGOUT_TOKEN_MAX_AGE_SECONDS) + CLOCK_SKEW_SECONDS) * 1000);
    return { subject, sid, jti: String(payload.jti), expiresAt };
  }
}

/** An end user's login: openid, the display claims where offered (shown to the user only), every gateway scope, and a refresh token where offered. */
function endUserScopes(offered: readonly string[] | undefined): string[] {
  const display = ['profile', 'email'].filter((scope) => offered?.includes(scope));
  return ['openid', ...display, ...PARTNER_SCOPES, ...(offered?.includes('offline_access') ? ['offline_access'] : [])];
}

function tokensOf(response: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): SessionTokens {
  const expiresIn = response.expiresIn() ?? 300;
  return {
    accessToken: response.access_token,
    accessExpiresAt: Date.now() + expiresIn * 1000,
    refreshToken: response.refresh_token,
    idToken: response.id_token,
  };
}

/** An error's kind and the provider's error code, for the operator: never a token. */
function describe(error: unknown): string {
  if (error instanceof client.ResponseBodyError) return `${error.error}: ${error.error_description ?? ''}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** What failed at the callback, in words that hold no token or claim. */
function reasonOf(error: unknown): string {
  if (error instanceof client.AuthorizationResponseError) return 'The provider refused the login';
  if (error instanceof client.ResponseBodyError) return 'The provider refused the authorization code';
  const code = (error as { code?: string }).code;
  if (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED') return 'The ID token does not match the login (nonce, issuer or audience)';
  if (code === 'OAUTH_INVALID_RESPONSE') return 'The provider’s answer is not a valid token response';
  return 'The login could not be completed with the provider';
}

/** The ID token's display claims, where the provider gives them as short strings: shown to the user, never logged or audited. */
function displayClaimsOf(claims: client.IDToken): DisplayClaims | undefined {
  const text = (value: unknown) => (typeof value === 'string' && value.length > 0 && value.length <= 200 ? value : undefined);
  const shown: DisplayClaims = { name: text(claims.name), preferredUsername: text(claims.preferred_username), email: text(claims.email) };
  return (shown.name ?? shown.preferredUsername ?? shown.email) ? shown : undefined;
}
