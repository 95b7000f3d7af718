import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OPERATION } from '../../common/domain/audit-operations';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../common/http/api-envelope.decorators';
import { Audited } from '../../common/http/audited.decorator';
import { BrowserSessions } from '../domain/browser-sessions.service';
import { EndUserIds } from '../domain/end-user-ids';
import type { AuthenticatedClient } from '../domain/api-client';
import { ALL_TENANTS } from '../../common/domain/request-record';
import { CurrentClient, Roles, Staff } from './auth.decorators';
import { EndedSessionsResponseDto, EndUserRefDto, EndUserSessionResponseDto } from './end-user-sessions.dto';

/**
 * An end user's browser sessions, for operators (admin): who is logged in where, and logging
 * someone out everywhere (a lost device, an account taken over). An admin reaches the end users of
 * its own tenant's issuers. Each call is audited under the admin who made it.
 */
/** Least privilege: an admin reaches the end users of its own tenant's issuers; staff, every tenant's. */
function tenantOf(caller: AuthenticatedClient): string | undefined {
  return caller.tenant === ALL_TENANTS ? undefined : caller.tenant;
}

@ApiTags('session')
@ApiBearerAuth()
@Roles('admin')
@Staff('operator')
@Controller({ path: 'api/v1/end-user-sessions' })
export class EndUserSessionsController {
  constructor(
    private readonly sessions: BrowserSessions,
    private readonly endUserIds: EndUserIds,
  ) {}

  @Get()
  @Audited(OPERATION.listSessions)
  @ApiOperation({
    operationId: 'listEndUserSessions',
    summary: 'An end user’s browser sessions (admin)',
    description: 'Their live sessions, newest first (at most 100): when each began, was last used and ends. Never a session id, cookie or token.',
  })
  @ApiEnvelopeResponse(200, EndUserSessionResponseDto, { isArray: true })
  @ApiErrorResponses(ERRORS.edge, ERRORS.staff, ERRORS.query)
  async list(@CurrentClient() admin: AuthenticatedClient, @Query() query: EndUserRefDto): Promise<EndUserSessionResponseDto[]> {
    const endUser = this.endUserIds.pseudonymOf(query.end_user, { issuer: query.end_user_issuer, tenant: tenantOf(admin) });
    return (await this.sessions.sessionsOf(endUser)).map((session) => EndUserSessionResponseDto.from(session));
  }

  @Post('end')
  @HttpCode(200)
  @Audited(OPERATION.endSessions)
  @ApiOperation({
    operationId: 'endEndUserSessions',
    summary: 'Log an end user out everywhere (admin)',
    description:
      'Ends every browser session of the end user on every replica, and revokes their refresh tokens at the OpenID provider where it can. ' +
      'Their access tokens held by apps last until they expire (at most OIDC_MAX_TOKEN_LIFETIME_SECONDS).',
  })
  @ApiEnvelopeResponse(200, EndedSessionsResponseDto, { message: 'Sessions ended' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.staff, ERRORS.body)
  async end(@CurrentClient() admin: AuthenticatedClient, @Body() body: EndUserRefDto): Promise<EndedSessionsResponseDto> {
    const endUser = this.endUserIds.pseudonymOf(body.end_user, { issuer: body.end_user_issuer, tenant: tenantOf(admin) });
    return { ended: (await this.sessions.endSessionsOf(endUser)).length };
  }
}
