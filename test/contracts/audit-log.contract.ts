import { randomUUID } from 'node:crypto';
import type { AuditEvent } from '../../src/audit/trail/domain/audit-event';
import type { AuditLog } from '../../src/audit/trail/domain/audit-log.port';

/**
 * What every AuditLog must do, run against the in-memory fake (test/contracts/fakes.spec.ts) and
 * the TypeORM repository on PostgreSQL (test/medium/port-contracts.medium-spec.ts), so the fake's
 * restatement of the unresolved-calls query cannot drift from the SQL. Each case uses references
 * of its own: the real log is shared by the whole run.
 */
export function auditLogContract(subject: () => AuditLog): void {
  /** Events in the order written, each written after the one before: the log records when (a database, its own clock). */
  let last = 0;
  const event = (overrides: Partial<AuditEvent> & Pick<AuditEvent, 'phase' | 'requestId'>): AuditEvent => ({
    id: randomUUID(),
    // The fake keeps this (a millisecond after the one made before); a database records its own time when the event is written.
    occurredAt: new Date((last = Math.max(Date.now(), last + 1))),
    operation: 'bank_account.create',
    clientId: randomUUID(),
    clientName: 'contract',
    tenant: 'contract',
    ...overrides,
  });
  const later = new Date(Date.now() + 10 * 365 * 24 * 3600 * 1000);
  const unresolvedOf = (reference: string, extra: { exceptRequestId?: string; attemptedBefore?: Date; limit?: number } = {}) =>
    subject().unresolved({ reference, attemptedBefore: extra.attemptedBefore ?? later, exceptRequestId: extra.exceptRequestId, limit: extra.limit ?? 10 });
  const write = async (...events: AuditEvent[]) => {
    for (const one of events) {
      await subject().append(one);
      // More than a millisecond before the next, by the clock (not a timer, which may fire early), so
      // that times read back to the millisecond keep the order written.
      const after = Date.now() + 2;
      while (Date.now() < after) await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };

  it('when an attempt has no terminal event, then it is unresolved with no outcome, naming its request and reference', async () => {
    const reference = randomUUID();
    const customerId = randomUUID();
    const attempt = event({ phase: 'attempted', requestId: 'r-crashed', reference, customerId });
    await write(attempt);

    const page = await unresolvedOf(reference);

    expect(page.calls).toEqual([
      expect.objectContaining({
        reference,
        customerId,
        requestId: 'r-crashed',
        state: 'no_outcome',
        attemptedAt: expect.any(Date),
        operation: 'bank_account.create',
      }),
    ]);
    expect(page.next).toBeUndefined();
  });

  it('when an attempt ended unknown, then it is unresolved as unknown, with the error id the partner was given', async () => {
    const reference = randomUUID();
    const errorId = randomUUID();
    await write(event({ phase: 'attempted', requestId: 'r-timeout', reference }), event({ phase: 'unknown', requestId: 'r-timeout', reference, errorId }));

    expect((await unresolvedOf(reference)).calls).toEqual([expect.objectContaining({ requestId: 'r-timeout', state: 'unknown', errorId })]);
  });

  it.each(['rejected', 'failed'] as const)('when an attempt ended %s, then it is not unresolved', async (phase) => {
    const reference = randomUUID();
    await write(event({ phase: 'attempted', requestId: 'r-ended', reference }), event({ phase, requestId: 'r-ended', reference }));

    expect((await unresolvedOf(reference)).calls).toEqual([]);
  });

  it('when a later request with the same reference succeeded, then the earlier unknown attempt is settled', async () => {
    const reference = randomUUID();
    await write(
      event({ phase: 'attempted', requestId: 'r-first', reference }),
      event({ phase: 'unknown', requestId: 'r-first', reference }),
      event({ phase: 'attempted', requestId: 'r-retry', reference }),
      event({ phase: 'succeeded', requestId: 'r-retry', reference }),
    );

    expect((await unresolvedOf(reference)).calls).toEqual([]);
  });

  it('when several attempts are unresolved, then newest first, the asking request left out, younger ones and those past the limit too', async () => {
    const reference = randomUUID();
    const attempts = ['r-1', 'r-2', 'r-3', 'r-4'].map((requestId) => event({ phase: 'attempted', requestId, reference }));
    await write(...attempts);

    expect((await unresolvedOf(reference)).calls.map((call) => call.requestId)).toEqual(['r-4', 'r-3', 'r-2', 'r-1']);
    expect((await unresolvedOf(reference, { exceptRequestId: 'r-4' })).calls.map((call) => call.requestId)).toEqual(['r-3', 'r-2', 'r-1']);
    const third = (await unresolvedOf(reference)).calls.find((call) => call.requestId === 'r-3')!.attemptedAt;
    expect((await unresolvedOf(reference, { attemptedBefore: third })).calls.map((call) => call.requestId)).toEqual(['r-2', 'r-1']);
    expect((await unresolvedOf(reference, { limit: 1 })).calls.map((call) => call.requestId)).toEqual(['r-4']);
  });

  it('when an attempt has no reference, then it is never unresolved (there is nothing to retry it with)', async () => {
    const customerId = randomUUID();
    await write(event({ phase: 'attempted', requestId: 'r-no-reference', customerId }));

    const page = await subject().unresolved({ attemptedBefore: later, limit: 1000 });

    expect(page.calls.filter((call) => call.customerId === customerId)).toEqual([]);
  });
}
