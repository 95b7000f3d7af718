import { Controller, Get, Header, Param, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CurrentClient, Public, Roles } from '../../../auth/http/auth.decorators';
import { DomainError } from '../../../common/domain/domain-error';
import { OPERATION } from '../../../common/domain/audit-operations';
import { ApiEnvelopeResponse, ApiErrorResponses, ERRORS } from '../../../common/http/api-envelope.decorators';
import { Audited } from '../../../common/http/audited.decorator';
import { AuditReceipts } from '../domain/audit-receipts';
import { TrustedKeys } from '../domain/audit-seal.port';
import { CheckpointConsistency } from '../domain/checkpoint-consistency';
import { ConsistencyProofDto, ConsistencyQueryDto, EventIdParamDto, InclusionProofDto, ProofPendingDto } from './audit-receipts.dto';

/** Where the audit log's public keys are published (RFC 8615's well-known space). */
export const AUDIT_KEYS_PATH = '/.well-known/audit-keys.json';

@ApiTags('receipts')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/receipts' })
export class AuditReceiptsController {
  constructor(private readonly receipts: AuditReceipts) {}

  @Get(':event_id')
  @Audited(OPERATION.readReceiptProof, { rateLimitPolicy: 'request-log' })
  @ApiOperation({
    operationId: 'getReceiptProof',
    summary: 'Proof that the audit log holds one of your events',
    description:
      'Once the event is sealed (within seconds): the signed checkpoint and the RFC 9162 inclusion proof of the event in the checkpoint’s Merkle tree, ' +
      'which you can check offline with the keys at ' +
      AUDIT_KEYS_PATH +
      '. Before that, 202 with `Retry-After`. It shows hashes of other events, never their contents. Another tenant’s event is 404.',
  })
  @ApiEnvelopeResponse(200, InclusionProofDto)
  @ApiEnvelopeResponse(202, ProofPendingDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'RECEIPT.NOT_FOUND', 'RECEIPT.PROOF_UNAVAILABLE')
  async proof(
    @Param() params: EventIdParamDto,
    @CurrentClient() client: AuthenticatedClient,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<InclusionProofDto | ProofPendingDto> {
    const answer = await this.receipts.proofOf(client.tenant, params.event_id.toLowerCase());
    if (answer.kind === 'sealed') return InclusionProofDto.from(answer.proof);
    void reply.status(202).header('retry-after', String(answer.retryAfterSeconds));
    return { status: 'pending', retry_after_seconds: answer.retryAfterSeconds };
  }
}

@ApiTags('receipts')
@ApiBearerAuth()
@Roles('partner')
@Controller({ path: 'api/v1/checkpoints' })
export class CheckpointConsistencyController {
  constructor(private readonly consistency: CheckpointConsistency) {}

  @Get('consistency')
  @Audited(OPERATION.readConsistencyProof, { rateLimitPolicy: 'request-log' })
  @ApiOperation({
    operationId: 'getConsistencyProof',
    summary: 'Proof that the audit log only grew since a checkpoint you kept',
    description:
      'The RFC 9162 consistency proof between the log’s tree your kept checkpoint (`from`) names and the one a later checkpoint (`to`, the newest by default) names, ' +
      'and the inclusion proof of your checkpoint’s own head in the later tree: together, every checkpoint up to yours is in the later one’s history. ' +
      'Check both offline with the keys at ' +
      AUDIT_KEYS_PATH +
      ' (the typed client’s `verifyConsistency`). Checkpoints written before statement version 3 name no tree: 404 `CHECKPOINT.PROOF_UNAVAILABLE`.',
  })
  @ApiEnvelopeResponse(200, ConsistencyProofDto)
  @ApiErrorResponses(ERRORS.edge, ERRORS.endUser, ERRORS.query, 'CHECKPOINT.NOT_FOUND', 'CHECKPOINT.PROOF_UNAVAILABLE')
  async proof(@Query() query: ConsistencyQueryDto): Promise<ConsistencyProofDto> {
    if (query.to !== undefined && query.to <= query.from) {
      const problem = { field: 'to', message: 'to must be a later checkpoint than from' };
      throw new DomainError('REQUEST.VALIDATION_FAILED', { details: problem.message, fields: [problem] });
    }
    return ConsistencyProofDto.from(await this.consistency.between(query.from, query.to));
  }
}

@ApiTags('receipts')
@Controller({ path: AUDIT_KEYS_PATH.slice(1, AUDIT_KEYS_PATH.lastIndexOf('/')) })
export class AuditKeysController {
  constructor(private readonly keys: TrustedKeys) {}

  @Get(AUDIT_KEYS_PATH.slice(AUDIT_KEYS_PATH.lastIndexOf('/') + 1))
  @Public()
  @Header('content-type', 'application/jwk-set+json')
  @Header('cache-control', 'public, max-age=300')
  @ApiOperation({
    operationId: 'getAuditKeys',
    summary: 'The audit log’s public keys (a JWKS)',
    description:
      'Every key checkpoints were signed with, the current one and the retired ones (RFC 8037 OKP keys, Ed25519; `kid` is a checkpoint’s `key_id`). ' +
      'Pin them: a receipt or proof you keep verifies with them offline, after any rotation.',
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
                  kid: { type: 'string', description: 'A checkpoint’s `key_id`.' },
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
  jwks(): string {
    // A string goes out as it is: key sets are read by JOSE libraries, which expect `keys` at the top.
    return JSON.stringify({ keys: this.keys.publicJwks() });
  }
}
