import { Controller, Get, Param, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CurrentClient, Roles } from '../../../auth/http/auth.decorators';
import { OPERATION } from '../../../common/domain/audit-operations';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { Audited } from '../../../common/http/audited.decorator';
import { REQUEST_LOG_PATH } from '../../../common/http/request-recorder.port';
import { RequestLog } from '../domain/request-log.service';
import { ERROR_DOCS_PATH, errorDocAnchor, ErrorDocs } from '../../../common/http/error-docs';
import { requestOrigin } from '../../../common/http/request-origin';
import { RequestIdParamDto, RequestLogLinks, RequestLogPageDto, RequestLogQueryDto, RequestTimelineDto } from './request-log.dto';

const DEFAULT_PAGE = 20;

@ApiTags('request-log')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: REQUEST_LOG_PATH.slice(1) })
export class RequestsController {
  constructor(
    private readonly log: RequestLog,
    private readonly docs: ErrorDocs,
  ) {}

  /** The links of a page or a timeline, on the origin the reader's request reached (or PUBLIC_BASE_URL, or ERROR_DOCS_URL). */
  private linksFor(request: FastifyRequest): RequestLogLinks {
    const origin = requestOrigin(request);
    return { docUrlOf: (code) => this.docs.urlOf(code, origin) ?? `${ERROR_DOCS_PATH}#${errorDocAnchor(code)}` };
  }

  @Get()
  @Audited(OPERATION.listRequests, { rateLimitPolicy: 'request-log' })
  @ApiOperation({
    operationId: 'listRequests',
    summary: 'Your requests, and what became of each',
    description:
      'Every request your tenant’s servers and end users made, newest first, a page at a time: how it ended, its error code and id, its provider call. ' +
      'Filters combine. Start from an `error.id` you were given (`error_id`), a `reference` or a customer. Without one of those three, a page reads a bounded stretch ' +
      'of your log (the newest 2,000 events after the cursor), so a page may hold fewer requests than `limit`, even none, with a `next_cursor`: follow it until it is null. ' +
      'Reads of this log count in a budget of their own ' +
      '(RATE_LIMIT_REQUEST_LOG_PER_MINUTE) and are recorded like any request; they are listed only when `operation` names them.',
  })
  @ApiEnvelopeResponse(200, RequestLogPageDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'AUDIT.INVALID_CURSOR', 'AUDIT.INVALID_RANGE')
  async list(@Query() query: RequestLogQueryDto, @CurrentClient() client: AuthenticatedClient, @Req() request: FastifyRequest): Promise<RequestLogPageDto> {
    const listing = await this.log.list(
      {
        tenant: client.tenant,
        from: query.from === undefined ? undefined : new Date(query.from),
        to: query.to === undefined ? undefined : new Date(query.to),
        status: query.status,
        statusClass: query.status_class === undefined ? undefined : Number(query.status_class[0]),
        operation: query.operation,
        errorCode: query.error_code,
        errorId: query.error_id,
        reference: query.reference?.toLowerCase(),
        customerId: query.customer_id?.toLowerCase(),
      },
      query.limit ?? DEFAULT_PAGE,
      query.cursor,
    );
    return RequestLogPageDto.from(listing, this.linksFor(request));
  }

  @Get(':request_id')
  @Audited(OPERATION.readRequest, { rateLimitPolicy: 'request-log' })
  @ApiOperation({
    operationId: 'getRequest',
    summary: 'One request’s timeline',
    description:
      'The request with this id (its `X-Request-Id`, as `error.request_log_url` names it), if your tenant made it: each audit event in order, each provider attempt, ' +
      'the request an idempotent replay gave back, and the later request that settled an unknown outcome. Another tenant’s request is 404, as one that never was.',
  })
  @ApiEnvelopeResponse(200, RequestTimelineDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'REQUEST_LOG.NOT_FOUND')
  async get(@Param() params: RequestIdParamDto, @CurrentClient() client: AuthenticatedClient, @Req() request: FastifyRequest): Promise<RequestTimelineDto> {
    return RequestTimelineDto.fromTimeline(await this.log.timeline(client.tenant, params.request_id), this.linksFor(request));
  }
}
