import { requestOrigin } from '../../common/http/request-origin';
import { Body, Controller, Get, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtension, ApiConsumes, ApiOperation, ApiProperty, ApiPropertyOptional, ApiQuery, ApiResponse, ApiTags, ApiSchema } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OPERATION } from '../../common/domain/audit-operations';

import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../common/http/api-envelope.decorators';
import { Audited } from '../../common/http/audited.decorator';
import { recordOf, targetOf } from '../../common/http/request-context';
import { InvalidLogoutToken, SessionEnded } from '../domain/auth.errors';
import { BrowserSessions } from '../domain/browser-sessions.service';
import { EndUserCustomers } from '../domain/end-user-customers.port';
import { endUserCaller, type AuthenticatedClient } from '../domain/api-client';
import { CurrentClient, EndUsers, Public } from './auth.decorators';
import { checkAntiForgery, clearedCookie, cookieOf, LOGIN_COOKIE, loginCookie, SESSION_COOKIE, sessionCookie, sessionCookieOf } from './browser-session-http';
import { SessionResponseDto } from './session.response.dto';
import { SESSION_PATHS } from '../domain/session-endpoints';

const LOGIN_COOKIE_SECONDS = 600;

export class LoginQueryDto {
  @ApiPropertyOptional({
    example: '/app/',
    description: 'Where the browser goes once logged in: a path on this service, or a URL on an allowed origin (CORS_ORIGINS).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  readonly return_to?: string;
}

@ApiSchema({ name: 'LogoutRequest' })
export class LogoutRequestDto {
  @ApiPropertyOptional({
    example: '/app/',
    description: 'Where the provider sends the browser after its own logout: a path here, or a URL on an allowed origin.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  readonly return_to?: string;
}

@ApiSchema({ name: 'LogoutResult' })
export class LogoutResponseDto {
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'https://login.partner.example/session/end?client_id=partner-web&post_logout_redirect_uri=https%3A%2F%2Fapp.partner.example%2F',
    description: 'Where to send the browser to log out at the OpenID provider too (RP-initiated logout); null when the provider has none.',
  })
  readonly logout_url!: string | null;
}

@ApiSchema({ name: 'BackchannelLogoutRequest' })
export class BackchannelLogoutDto {
  @ApiProperty({ description: 'The logout token: a JWT signed by the OpenID provider (OpenID Connect Back-Channel Logout 1.0, section 2.4).' })
  readonly logout_token!: string;
}

@ApiSchema({ name: 'BackchannelLogoutResult' })
export class BackchannelLogoutResponseDto {
  @ApiProperty({ example: 1, description: 'How many sessions ended.' })
  readonly ended!: number;
}

/**
 * A web app's browser session (docs/security.md, "Web apps"): the login through the partner's
 * OpenID provider, its callback, logout, and the provider's back-channel logout. The browser gets
 * an HttpOnly cookie and never a token; its requests to the partner API carry the cookie and the
 * X-CSRF header.
 */
@ApiTags('session')
@Controller({ path: 'api/v1/session' })
export class SessionController {
  constructor(
    @Inject(BrowserSessions) private readonly sessions: BrowserSessions,
    private readonly customers: EndUserCustomers,
  ) {}

  @Get()
  @Audited(OPERATION.readSession)
  @EndUsers()
  @ApiOperation({
    operationId: 'getSession',
    summary: 'Who is logged in, in this browser',
    description:
      'For a web app, with the session cookie and `X-CSRF: 1`: the end user’s pseudonym, tenant, scopes and customers, and until when the session lasts. ' +
      'Never a token. Without a session: 401.',
  })
  @ApiEnvelopeResponse(200, SessionResponseDto)
  @ApiErrorResponses(ERRORS.edge, 'AUTH.TOKEN_MISSING', 'AUTH.INVALID_TOKEN', 'SESSION.ENDED', 'SESSION.CSRF_REJECTED', 'AUTH.ISSUER_UNAVAILABLE')
  async session(@CurrentClient() caller: AuthenticatedClient): Promise<SessionResponseDto> {
    // An app's access token or a server's client token is not a browser session.
    if (!caller.session) throw new SessionEnded('This request has no browser session');
    const customers = await this.customers.customersOf(caller.tenant, caller.id);
    return SessionResponseDto.from(caller, caller.session, customers);
  }

  @Get('login')
  @Public()
  @Audited(OPERATION.startLogin)
  @ApiOperation({
    operationId: 'startSessionLogin',
    summary: 'Start a web app’s login',
    description:
      'A browser navigation, not a fetch: answers 302 to the OpenID provider (with PKCE, state and nonce; through a pushed authorization request when the provider has them), ' +
      'and sets a short-lived login cookie that binds the callback to this browser.',
  })
  @ApiResponse({ status: 302, description: 'To the OpenID provider’s login.' })
  @ApiErrorResponses(ERRORS.edge, ...ERRORS.query, 'SESSION.RETURN_TO_REFUSED', 'SESSION.NOT_CONFIGURED', 'AUTH.ISSUER_UNAVAILABLE')
  async login(@Query() query: LoginQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<null> {
    const origin = this.sessions.loginOriginFor(requestOrigin(request) ?? '');
    if (origin !== undefined) {
      // Checked here as on the public origin, so that nothing is redirected that would be refused there.
      this.sessions.returnTo(query.return_to);
      const target = `${origin}${SESSION_PATHS.login}${query.return_to === undefined ? '' : `?return_to=${encodeURIComponent(query.return_to)}`}`;
      void reply.code(302).header('location', target).header('cache-control', 'no-store');
      return null;
    }
    const { location, loginCookie: binding } = await this.sessions.startLogin(query.return_to, firstOf(sessionCookieOf(request)));
    void reply.code(302).header('location', location).header('cache-control', 'no-store').header('set-cookie', loginCookie(binding, LOGIN_COOKIE_SECONDS));
    return null;
  }

  @Get('callback')
  @Public()
  @Audited(OPERATION.completeLogin)
  @ApiOperation({
    operationId: 'completeSessionLogin',
    summary: 'The OpenID provider’s callback',
    description:
      'Where the provider sends the browser back (the redirect URI registered for this service). The login is used once, in the browser that started it; ' +
      'the code is exchanged and the ID token checked; a new session is made and its cookie set (HttpOnly, Secure, SameSite=Strict, `__Host-`). Answers 302 to `return_to`.',
  })
  @ApiQuery({ name: 'state', required: true, type: String })
  @ApiQuery({ name: 'code', required: false, type: String })
  @ApiQuery({ name: 'iss', required: false, type: String })
  // Passed whole to the relying-party library, not to the validation pipe: a provider may add its own (session_state,
  // or error and error_description when the login failed), so no other parameter is refused here.
  @ApiExtension('x-additional-query-parameters', true)
  @ApiResponse({ status: 302, description: 'Logged in: to `return_to`, with the session cookie.' })
  @ApiErrorResponses(ERRORS.edge, 'SESSION.LOGIN_FAILED', 'SESSION.NOT_CONFIGURED', 'AUTH.ISSUER_UNAVAILABLE')
  async callback(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<null> {
    // The callback's parameters as sent (code, state, iss, or error): passed whole to the relying-party library.
    const query = new URLSearchParams(targetOf(request.raw).query);
    void reply.header('cache-control', 'no-store').header('set-cookie', clearedCookie(LOGIN_COOKIE));
    const { sessionId, returnTo, client } = await this.sessions.finishLogin(
      query,
      firstOf(cookieOf(request.headers.cookie, LOGIN_COOKIE)),
      firstOf(sessionCookieOf(request)),
    );
    recordOf(request.raw).noteClient(client);
    void reply
      .code(302)
      .header('location', returnTo)
      .header('set-cookie', [clearedCookie(LOGIN_COOKIE), sessionCookie(sessionId)]);
    return null;
  }

  @Post('logout')
  @HttpCode(200)
  @Public()
  @Audited(OPERATION.logout)
  @ApiOperation({
    operationId: 'endSession',
    summary: 'Log the browser out',
    description:
      'With the session cookie and `X-CSRF: 1`; the body is optional. The session ends on every replica and its cookie is cleared, whatever the OpenID provider’s state: ' +
      'its refresh token is revoked there when the provider can be asked, and `logout_url` is where to send the browser to log out at the provider too (null when it has none, or cannot be reached).',
  })
  @ApiBody({ type: LogoutRequestDto, required: false })
  @ApiEnvelopeResponse(200, LogoutResponseDto, { message: 'Logged out' })
  @ApiErrorResponses(ERRORS.edge, ...ERRORS.body, 'SESSION.ENDED', 'SESSION.CSRF_REJECTED', 'SESSION.RETURN_TO_REFUSED', 'SESSION.NOT_CONFIGURED')
  async logout(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: LogoutRequestDto = {},
  ): Promise<LogoutResponseDto> {
    // Needs only the cookie and the anti-forgery rules: never the provider, never a token's renewal.
    const cookie = sessionCookieOf(request);
    if (cookie === undefined) throw new SessionEnded('Only a browser session logs out');
    checkAntiForgery(request, this.sessions.allowedOrigins());
    // The cookie is cleared once the session has ended: a refused return_to or a database away leaves both, for a retry.
    const { ended, logoutUrl } = await this.sessions.logout(typeof cookie === 'string' ? [cookie] : cookie, body?.return_to);
    void reply.header('cache-control', 'no-store').header('set-cookie', clearedCookie(SESSION_COOKIE));
    if (ended) recordOf(request.raw).noteClient(endUserCaller(ended.endUser, ended.tenant));
    return { logout_url: logoutUrl ?? null };
  }

  @Post('backchannel-logout')
  @HttpCode(200)
  @Public()
  @Audited(OPERATION.backchannelLogout)
  @ApiOperation({
    operationId: 'backchannelLogout',
    summary: 'Back-channel logout (for the OpenID provider)',
    description:
      'OpenID Connect Back-Channel Logout 1.0: the provider posts a logout token (application/x-www-form-urlencoded); every session of its `sid`, or of its `sub`, ends on every replica. ' +
      'Register `<PUBLIC_BASE_URL>/api/v1/session/backchannel-logout` as the client’s backchannel_logout_uri.',
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({ type: BackchannelLogoutDto })
  @ApiEnvelopeResponse(200, BackchannelLogoutResponseDto, { message: 'Sessions ended' })
  @ApiErrorResponses(ERRORS.edge, 'SESSION.INVALID_LOGOUT_TOKEN', 'SESSION.NOT_CONFIGURED', 'REQUEST.UNSUPPORTED_MEDIA_TYPE', 'AUTH.ISSUER_UNAVAILABLE')
  async backchannelLogout(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<BackchannelLogoutResponseDto> {
    void reply.header('cache-control', 'no-store');
    const form = request.body;
    const tokens = form instanceof URLSearchParams ? form.getAll('logout_token') : [];
    if (tokens.length !== 1) throw new InvalidLogoutToken('Send one logout_token, form-encoded');
    const { client, ended } = await this.sessions.backchannelLogout(tokens[0]);
    if (client) recordOf(request.raw).noteClient(client);
    return { ended };
  }
}

function firstOf(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
