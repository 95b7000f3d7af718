import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { requestContextOf } from '../../common/request-context';
import { ApiClientRole } from '../domain/api-client';
import { ApiClientsService } from '../domain/api-clients.service';
import { RoleNotAllowed } from '../domain/auth.errors';
import { attachClient, IS_PUBLIC, REQUIRED_ROLES } from './auth.decorators';

/** `Bearer <token>`, scheme case-insensitive; anything else counts as no token. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header);
  return match?.[1];
}

/** Global guard: every route needs a valid client token unless marked @Public(). */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly clients: ApiClientsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const client = await this.clients.authenticate(bearerToken(request.headers.authorization));
    attachClient(request, client);
    requestContextOf(request.raw).client = { id: client.id, name: client.name, tenant: client.tenant };

    const roles = this.reflector.getAllAndOverride<ApiClientRole[] | undefined>(REQUIRED_ROLES, targets);
    if (roles && !roles.includes(client.role)) throw new RoleNotAllowed(roles);
    return true;
  }
}
