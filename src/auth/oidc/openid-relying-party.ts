import { createRemoteJWKSet, errors as joseErrors, importJWK, JWK, JWTVerifyGetKey, jwtVerify } from 'jose';
import { Logger } from '@nestjs/common';
import * as client from 'openid-client';
import { ALL_SCOPES } from '../domain/scopes';
import { InvalidLogoutToken, IssuerUnavailable, LoginFailed } from '../domain/auth.errors';
import { CompletedLogin, ExpectedCallback, LoginStart, LogoutNotice, RefreshRefused, RelyingParty, SessionTokens } from '../domain/browser-session.ports';
import type { SessionSettings } from '../../config/end-user-settings';

/** How long a call to the provider may take, in seconds (openid-client's timeout). */
const TIMEOUT_SECONDS = 5;
/** How old a logout token may be (its iat), and the clocks' leeway, in seconds. */
const LOGOUT_TOKEN_MAX_AGE_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 30;
const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** How long a failed discovery is remembered, so a flood of logins does not become a flood of fetches. */
const FAILURE_TTL_MS = 5_000;

const loopback = (url: URL) => url.hostname === '127.0.0.1' || url.hostname === '[::1]' || url.hostname === 'localhost';

/**
 * This service as a confidential client of the partner's OpenID provider, with openid-client
 * (panva's OpenID Certified relying-party library): discovery, authorization code + PKCE (S256) +
 * state + nonce, pushed authorization requests (RFC 9126) whenever the provider advertises them,
 * client_secret_basic or private_key_jwt, the ID token validated (signature, iss, aud, exp, nonce),
 * refresh, RP-initiated logout. Logout tokens are verified with jose against the provider's keys.
 */
export class OpenIdRelyingParty extends RelyingParty {
  readonly issuer: string;
  private configuration?: { at: number; config: Promise<client.Configuration>; failed?: boolean };
  private keys?: JWTVerifyGetKey;
  private readonly logger = new Logger('Sessions');

  constructor(
    private readonly settings: Pick<SessionSettings, 'issuer' | 'clientId' | 'clientAuth'>,
    /** The resource the access tokens are for (OIDC_AUDIENCE, RFC 8707). */
    private readonly resource: string,
  ) {
    super();
    this.issuer = settings.issuer;
  }

  private config(): Promise<client.Configuration> {
    const now = Date.now();
    const entry = this.configuration;
    if (entry && !(entry.failed && now - entry.at >= FAILURE_TTL_MS)) return entry.config;
    const fresh: { at: number; config: Promise<client.Configuration>; failed?: boolean } = {
      at: now,
      config: this.discover().catch((error: unknown) => {
        fresh.failed = true;
        this.logger.warn({ issuer: this.issuer, reason: describe(error) }, 'The OpenID provider’s discovery failed');
        throw new IssuerUnavailable(error);
      }),
    };
    fresh.config.catch(() => undefined);
    this.configuration = fresh;
    return fresh.config;
  }

  private async discover(): Promise<client.Configuration> {
    const server = new URL(this.settings.issuer);
    const auth = this.settings.clientAuth;
    const authentication =
      'secret' in auth
        ? client.ClientSecretBasic(auth.secret)
        : client.PrivateKeyJwt({ key: (await importJWK(auth.privateJwk as JWK, auth.privateJwk.alg)) as client.CryptoKey, kid: auth.privateJwk.kid });
    const config = await client.discovery(server, this.settings.clientId, undefined, authentication, {
      // The development provider and tests run on loopback over plain HTTP; anything else must be TLS.
      execute: server.protocol === 'http:' && loopback(server) ? [client.allowInsecureRequests] : [],
      timeout: TIMEOUT_SECONDS,
    });
    const jwksUri = config.serverMetadata().jwks_uri;
    if (!jwksUri) throw new Error('The provider’s discovery document has no jwks_uri');
    this.keys = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: TIMEOUT_SECONDS * 1000 });
    return config;
  }

  async startLogin(redirectUri: string): Promise<LoginStart> {
    const config = await this.config();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const offered = config.serverMetadata().scopes_supported;
    const scope = ['openid', ...ALL_SCOPES, ...(offered?.includes('offline_access') ? ['offline_access'] : [])].join(' ');
    const parameters = {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      resource: this.resource,
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
        { redirect_uri: expected.redirectUri, resource: this.resource },
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
    };
  }

  async refresh(refreshToken: string): Promise<SessionTokens> {
    const config = await this.config();
    try {
      return tokensOf(await client.refreshTokenGrant(config, refreshToken, { resource: this.resource }));
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

  async readLogoutToken(token: string): Promise<LogoutNotice> {
    const config = await this.config();
    if (typeof token !== 'string' || token.length === 0 || token.length > 8192) throw new InvalidLogoutToken('Send one logout_token');
    const advertised = config.serverMetadata().id_token_signing_alg_values_supported ?? ['RS256'];
    let payload;
    try {
      const verified = await jwtVerify(token, this.keys!, {
        issuer: this.issuer,
        audience: this.settings.clientId,
        algorithms: advertised.filter((alg) => alg !== 'none' && !alg.startsWith('HS')),
        maxTokenAge: LOGOUT_TOKEN_MAX_AGE_SECONDS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ['iat', 'jti'],
      });
      if (verified.protectedHeader.typ !== undefined && verified.protectedHeader.typ.toLowerCase() !== 'logout+jwt') throw new Error('typ');
      payload = verified.payload;
    } catch (error) {
      if (error instanceof joseErrors.JWKSTimeout) throw new IssuerUnavailable(error);
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
