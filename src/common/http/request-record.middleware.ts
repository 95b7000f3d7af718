import { Injectable, NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { recordOf, runWithRecord } from '../domain/request-record';

/**
 * Makes the request's context visible to code far from the controller: the outbound adapter
 * forwards the request id and notes what the provider said; the audit trail reads both.
 */
@Injectable()
export class RequestRecordMiddleware implements NestMiddleware {
  use(req: IncomingMessage & { id?: string }, _res: ServerResponse, next: () => void): void {
    runWithRecord(recordOf(req), next);
  }
}
