import { Injectable } from '@nestjs/common';
import { Clock } from '../../../common/domain/clock.port';
import { AuditLog } from '../../trail/domain/audit-log.port';
import { decodeCursor, encodeCursor } from '../../search/domain/audit-events.service';
import { InvalidUnresolvedWindow } from './reconciliation.errors';
import { UnresolvedCall, UnresolvedQuery } from '../../trail/domain/unresolved-call';

/** A call younger than this may still be running: its answer may yet come. */
export const DEFAULT_OLDER_THAN_MS = 60_000;
/** How far back a listing looks unless told otherwise (a year of attempts is a long scan). */
export const DEFAULT_SINCE_MS = 30 * 86_400_000;
export const MAX_UNRESOLVED_PAGE = 500;

export interface UnresolvedWindow {
  /** Only calls attempted at least this long ago. */
  readonly olderThanMs?: number;
  /** Only calls attempted at most this long ago. */
  readonly sinceMs?: number;
}

/** The one rule on a window, for the API and the command line alike. */
export function checkUnresolvedWindow(window: UnresolvedWindow): void {
  if ((window.sinceMs ?? DEFAULT_SINCE_MS) <= (window.olderThanMs ?? DEFAULT_OLDER_THAN_MS)) throw new InvalidUnresolvedWindow();
}

export interface UnresolvedCallsPage {
  readonly calls: readonly UnresolvedCall[];
  readonly nextCursor?: string;
  /** The attempts looked at: [since, before). */
  readonly window: { readonly since: Date; readonly before: Date };
}

/**
 * Reconciliation: the mutating calls whose outcome at the provider is unknown (UnresolvedCall),
 * newest first, for support to settle with the provider (docs/operations.md).
 */
@Injectable()
export class UnresolvedCalls {
  constructor(
    private readonly log: AuditLog,
    private readonly clock: Clock,
  ) {}

  async page(window: UnresolvedWindow, limit: number, cursor?: string): Promise<UnresolvedCallsPage> {
    const bounds = this.bounds(window);
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const page = await this.log.unresolved(this.query(bounds, limit, after));
    return { calls: page.calls, ...(page.next ? { nextCursor: encodeCursor(page.next) } : {}), window: bounds };
  }

  /** Every unresolved call in the window, a page at a time. */
  async *all(window: UnresolvedWindow): AsyncGenerator<UnresolvedCall> {
    const bounds = this.bounds(window);
    let after;
    do {
      const page = await this.log.unresolved(this.query(bounds, MAX_UNRESOLVED_PAGE, after));
      yield* page.calls;
      after = page.next;
    } while (after);
  }

  private query(bounds: { since: Date; before: Date }, limit: number, after: UnresolvedQuery['after']): UnresolvedQuery {
    return { attemptedBefore: bounds.before, attemptedSince: bounds.since, limit: Math.min(limit, MAX_UNRESOLVED_PAGE), after };
  }

  /** @throws InvalidUnresolvedWindow when `since` does not reach further back than `olderThan`. */
  private bounds(window: UnresolvedWindow): { since: Date; before: Date } {
    checkUnresolvedWindow(window);
    const now = this.clock.now().getTime();
    return { since: new Date(now - (window.sinceMs ?? DEFAULT_SINCE_MS)), before: new Date(now - (window.olderThanMs ?? DEFAULT_OLDER_THAN_MS)) };
  }
}
