import { Injectable, NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { runWithRequestContext } from './request-context';

/** Makes the request id visible to code far from the controller (the outbound adapter forwards it). */
@Injectable()
export class RequestContextMiddleware implements NestMiddleware {
  use(req: IncomingMessage & { id?: string }, _res: ServerResponse, next: () => void): void {
    runWithRequestContext({ requestId: req.id ?? 'unknown' }, next);
  }
}
