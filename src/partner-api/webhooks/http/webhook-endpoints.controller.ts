import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CurrentClient, Public, Roles } from '../../../auth/http/auth.decorators';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { Audited } from '../../../common/http/audited.decorator';
import { createdRange, DEFAULT_LIST_PAGE, ListQueryDto } from '../../../common/http/list-query.dto';
import { WebhookSigningKeys } from '../domain/signing-keys.port';
import { WEBHOOK_OPERATIONS, WebhookEndpointsService } from '../domain/webhook-endpoints.service';
import {
  DeletedEndpointDto,
  DeliveryAttemptListDto,
  EndpointIdParamDto,
  RedeliverRequestDto,
  RedeliveryDto,
  RotateSecretRequestDto,
  WebhookEndpointChangesDto,
  WebhookEndpointDto,
  WebhookEndpointListDto,
  WebhookEndpointRequestDto,
  WebhookEndpointWithSecretDto,
} from './webhook-endpoint.dto';

const settingsOf = (body: WebhookEndpointChangesDto) => ({
  ...(body.url !== undefined ? { url: body.url } : {}),
  ...(body.event_types !== undefined ? { eventTypes: [...new Set(body.event_types)] } : {}),
  ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
  ...(body.description !== undefined ? { description: body.description } : {}),
  ...(body.ordered !== undefined ? { ordered: body.ordered } : {}),
  ...(body.snapshot !== undefined ? { snapshot: body.snapshot } : {}),
});

@ApiTags('webhooks')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/webhook-endpoints' })
export class WebhookEndpointsController {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @Post()
  @HttpCode(201)
  @Audited(WEBHOOK_OPERATIONS.create)
  @ApiOperation({
    operationId: 'createWebhookEndpoint',
    summary: 'Add a webhook endpoint',
    description:
      'Events of your tenant are POSTed to it, signed as Standard Webhooks sign them (docs/webhooks.md). The answer holds its ' +
      'signing secret, shown this once.',
  })
  @ApiEnvelopeResponse(201, WebhookEndpointWithSecretDto, { message: 'Webhook endpoint created' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.body, 'WEBHOOK_ENDPOINT.URL_REFUSED')
  async create(@CurrentClient() client: AuthenticatedClient, @Body() body: WebhookEndpointRequestDto): Promise<WebhookEndpointWithSecretDto> {
    const made = await this.endpoints.create(client, { eventTypes: [], enabled: true, ordered: false, snapshot: false, ...settingsOf(body), url: body.url });
    return WebhookEndpointWithSecretDto.withSecret(made);
  }

  @Get()
  @Audited(WEBHOOK_OPERATIONS.list)
  @ApiOperation({ operationId: 'listWebhookEndpoints', summary: 'List your webhook endpoints', description: 'Newest first, a page at a time.' })
  @ApiEnvelopeResponse(200, WebhookEndpointListDto, { message: 'Webhook endpoints listed' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'AUDIT.INVALID_CURSOR')
  async list(@CurrentClient() client: AuthenticatedClient, @Query() query: ListQueryDto): Promise<WebhookEndpointListDto> {
    return WebhookEndpointListDto.from(await this.endpoints.list(client, query.limit ?? DEFAULT_LIST_PAGE, query.cursor));
  }

  @Get(':id')
  @Audited(WEBHOOK_OPERATIONS.read)
  @ApiOperation({ operationId: 'getWebhookEndpoint', summary: 'Read a webhook endpoint', description: 'Its settings; never its secret.' })
  @ApiEnvelopeResponse(200, WebhookEndpointDto, { message: 'Webhook endpoint retrieved' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'WEBHOOK_ENDPOINT.NOT_FOUND')
  async read(@CurrentClient() client: AuthenticatedClient, @Param() params: EndpointIdParamDto): Promise<WebhookEndpointDto> {
    return WebhookEndpointDto.from(await this.endpoints.read(client, params.id));
  }

  @Patch(':id')
  @Audited(WEBHOOK_OPERATIONS.update)
  @ApiOperation({
    operationId: 'updateWebhookEndpoint',
    summary: 'Change a webhook endpoint',
    description: 'Only the fields sent change. Enabling an endpoint the service disabled clears why it was.',
  })
  @ApiEnvelopeResponse(200, WebhookEndpointDto, { message: 'Webhook endpoint updated' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.body, 'WEBHOOK_ENDPOINT.NOT_FOUND', 'WEBHOOK_ENDPOINT.URL_REFUSED')
  async update(
    @CurrentClient() client: AuthenticatedClient,
    @Param() params: EndpointIdParamDto,
    @Body() body: WebhookEndpointChangesDto,
  ): Promise<WebhookEndpointDto> {
    return WebhookEndpointDto.from(await this.endpoints.update(client, params.id, settingsOf(body)));
  }

  @Delete(':id')
  @Audited(WEBHOOK_OPERATIONS.delete)
  @ApiOperation({
    operationId: 'deleteWebhookEndpoint',
    summary: 'Remove a webhook endpoint',
    description: 'Nothing more is sent to it; its delivery log goes with it.',
  })
  @ApiEnvelopeResponse(200, DeletedEndpointDto, { message: 'Webhook endpoint deleted' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'WEBHOOK_ENDPOINT.NOT_FOUND')
  async remove(@CurrentClient() client: AuthenticatedClient, @Param() params: EndpointIdParamDto): Promise<DeletedEndpointDto> {
    await this.endpoints.remove(client, params.id);
    return { id: params.id, deleted: true };
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @Audited(WEBHOOK_OPERATIONS.rotate)
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate a webhook endpoint’s secret',
    description: 'A new secret, shown this once. The old one keeps signing beside it for `overlap_hours` (24 by default), or is revoked at once with 0.',
  })
  @ApiEnvelopeResponse(200, WebhookEndpointWithSecretDto, { message: 'Webhook secret rotated' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.body, 'WEBHOOK_ENDPOINT.NOT_FOUND')
  async rotate(
    @CurrentClient() client: AuthenticatedClient,
    @Param() params: EndpointIdParamDto,
    @Body() body: RotateSecretRequestDto,
  ): Promise<WebhookEndpointWithSecretDto> {
    return WebhookEndpointWithSecretDto.withSecret(await this.endpoints.rotate(client, params.id, body.overlap_hours));
  }

  @Get(':id/deliveries')
  @Audited(WEBHOOK_OPERATIONS.deliveries)
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: 'List a webhook endpoint’s delivery attempts',
    description: 'Every attempt, newest first: when, the status, the latency, the first 1 KiB of the answer, why it failed, and when the next is due.',
  })
  @ApiEnvelopeResponse(200, DeliveryAttemptListDto, { message: 'Webhook deliveries listed' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'WEBHOOK_ENDPOINT.NOT_FOUND', 'AUDIT.INVALID_CURSOR')
  async deliveries(
    @CurrentClient() client: AuthenticatedClient,
    @Param() params: EndpointIdParamDto,
    @Query() query: ListQueryDto,
  ): Promise<DeliveryAttemptListDto> {
    return DeliveryAttemptListDto.from(await this.endpoints.attempts(client, { endpointId: params.id }, query.limit ?? DEFAULT_LIST_PAGE, query.cursor));
  }

  @Post(':id/redeliveries')
  @HttpCode(202)
  @Audited(WEBHOOK_OPERATIONS.redeliver)
  @ApiOperation({
    operationId: 'redeliverWebhooks',
    summary: 'Deliver events again',
    description:
      'One event (`event_id`), or every delivery to this endpoint that failed in a time range (`from`, `to`): each is attempted at once, with the same `webhook-id`.',
  })
  @ApiEnvelopeResponse(202, RedeliveryDto, { message: 'Redelivery asked for' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.body, 'WEBHOOK_ENDPOINT.NOT_FOUND', 'WEBHOOK_ENDPOINT.DELIVERY_NOT_FOUND', 'AUDIT.INVALID_RANGE')
  async redeliver(
    @CurrentClient() client: AuthenticatedClient,
    @Param() params: EndpointIdParamDto,
    @Body() body: RedeliverRequestDto,
  ): Promise<RedeliveryDto> {
    const which = body.event_id !== undefined ? { eventId: body.event_id.toLowerCase() } : createdRange(body);
    return { redelivered: await this.endpoints.redeliver(client, params.id, which) };
  }
}

@ApiTags('events')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/events' })
export class EventDeliveriesController {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @Get(':id/deliveries')
  @Audited(WEBHOOK_OPERATIONS.eventDeliveries)
  @ApiOperation({ operationId: 'listEventDeliveries', summary: 'List an event’s delivery attempts', description: 'To every endpoint, newest first.' })
  @ApiEnvelopeResponse(200, DeliveryAttemptListDto, { message: 'Event deliveries listed' })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated, ERRORS.query, 'AUDIT.INVALID_CURSOR')
  async deliveries(
    @CurrentClient() client: AuthenticatedClient,
    @Param() params: EndpointIdParamDto,
    @Query() query: ListQueryDto,
  ): Promise<DeliveryAttemptListDto> {
    return DeliveryAttemptListDto.from(
      await this.endpoints.attempts(client, { eventId: params.id.toLowerCase() }, query.limit ?? DEFAULT_LIST_PAGE, query.cursor),
    );
  }
}

@ApiTags('webhooks')
@Controller({ path: 'api/v1/webhooks' })
export class WebhookKeysController {
  constructor(private readonly keys: WebhookSigningKeys) {}

  @Get('jwks')
  @Public()
  @Audited(WEBHOOK_OPERATIONS.keys)
  @Header('content-type', 'application/jwk-set+json')
  @Header('cache-control', 'public, max-age=300')
  @ApiOperation({
    operationId: 'getWebhookKeys',
    summary: 'The webhook signing keys (a JWKS)',
    description:
      'The Ed25519 public keys (RFC 8037 OKP keys) that every delivery’s `v1a` signature verifies against, without a shared secret ' +
      '(docs/webhooks.md, "Verifying a delivery").',
  })
  @ApiOkResponse({
    description: 'A JWK Set (RFC 7517), as it is: no envelope.',
    content: {
      'application/jwk-set+json': {
        schema: {
          type: 'object',
          required: ['keys'],
          properties: {
            keys: {
              type: 'array',
              items: {
                type: 'object',
                required: ['kty', 'crv', 'x', 'kid', 'alg', 'use'],
                properties: {
                  kty: { type: 'string', enum: ['OKP'] },
                  crv: { type: 'string', enum: ['Ed25519'] },
                  x: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', description: 'The public key, base64url (RFC 8037).' },
                  kid: { type: 'string', description: 'The key’s RFC 7638 thumbprint.' },
                  alg: { type: 'string', enum: ['EdDSA'] },
                  use: { type: 'string', enum: ['sig'] },
                },
              },
            },
          },
        },
      },
    },
  })
  @ApiErrorResponses(ERRORS.probe)
  async jwks(): Promise<string> {
    // A string goes out as it is: key sets are read by JOSE libraries, which expect `keys` at the top.
    return JSON.stringify(await this.keys.publicKeys());
  }
}
