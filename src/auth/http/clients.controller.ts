import { OPERATION } from '../../common/domain/audit-operations';
import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../common/http/audited.decorator';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../common/http/api-envelope.decorators';
import { ApiClientsService } from '../domain/api-clients.service';
import { ApiClientResponseDto } from './api-client.response.dto';
import { Roles, Staff } from './auth.decorators';

@ApiTags('clients')
@ApiBearerAuth()
@Controller({ path: 'api/v1' })
export class ClientsController {
  constructor(private readonly clients: ApiClientsService) {}

  @Get('clients')
  @Audited(OPERATION.listClients)
  @Roles('admin')
  @Staff('operator')
  @ApiOperation({
    operationId: 'listApiClients',
    summary: 'List API clients (admin)',
    description: 'Never returns tokens: only their owners.',
  })
  @ApiEnvelopeResponse(200, ApiClientResponseDto, { isArray: true })
  @ApiErrorResponses(ERRORS.edge, ERRORS.staff)
  async list(): Promise<ApiClientResponseDto[]> {
    const clients = await this.clients.list();
    return clients.map((client) => ApiClientResponseDto.fromClient(client));
  }
}
