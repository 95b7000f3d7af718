import { OPERATION } from '../../common/domain/audit-operations';
import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../../common/http/audited.decorator';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../common/http/api-envelope.decorators';
import type { AuthenticatedClient } from '../domain/api-client';
import { ApiClientsService } from '../domain/api-clients.service';
import { ApiClientResponseDto, CallerResponseDto } from './api-client.response.dto';
import { CurrentClient, Roles } from './auth.decorators';

@ApiTags('clients')
@ApiBearerAuth()
@Controller({ path: 'api/v1' })
export class ClientsController {
  constructor(private readonly clients: ApiClientsService) {}

  @Get('me')
  @Audited(OPERATION.readClient)
  @ApiOperation({ summary: 'The client the token belongs to', description: 'A quick way to check a token.' })
  @ApiEnvelopeResponse(200, CallerResponseDto)
  @ApiErrorResponses(ERRORS.edge, 'AUTH.INVALID_TOKEN')
  me(@CurrentClient() client: AuthenticatedClient): CallerResponseDto {
    return CallerResponseDto.from(client);
  }

  @Get('clients')
  @Audited(OPERATION.listClients)
  @Roles('admin')
  @ApiOperation({ summary: 'List API clients (admin)', description: 'Never returns tokens: only their owners.' })
  @ApiEnvelopeResponse(200, ApiClientResponseDto, { isArray: true })
  @ApiErrorResponses(ERRORS.edge, ERRORS.authenticated)
  async list(): Promise<ApiClientResponseDto[]> {
    const clients = await this.clients.list();
    return clients.map((client) => ApiClientResponseDto.fromClient(client));
  }
}
