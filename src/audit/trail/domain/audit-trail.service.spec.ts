import { CountingMetrics, FixedClock, InMemoryAuditLog } from '../../../../test/support/fakes';
import { nestLogsOfEachTest } from '../../../../test/support/nest-logs';
import { ALL_TENANTS, inRequestScope, RequestRecord } from '../../../common/domain/request-record';
import { AuditTrail } from './audit-trail.service';
import { AuditUnavailable, EarlierAttemptUnresolved } from './audit.errors';
import { REFERENCE_ALREADY_SEEN, UpstreamError } from '../../../common/domain/upstream';
import { DomainError } from '../../../common/domain/domain-error';

/** A store's own error, as the database adapter throws one in an outage. */
class StoreDown extends DomainError {
  constructor() {
    super('DATABASE.UNAVAILABLE');
  }
}
const alreadySeen = () => new UpstreamError({ code: REFERENCE_ALREADY_SEEN, message: 'already seen', outcome: 'rejected', upstream: { status: 409 } });

describe('AuditTrail', () => {
  let log: InMemoryAuditLog;
  let metrics: CountingMetrics;
  let sut: AuditTrail;
  let clock: FixedClock;
  const logs = nestLogsOfEachTest();

  beforeEach(() => {
    log = new InMemoryAuditLog();
    metrics = new CountingMetrics();
    clock = new FixedClock(new Date('2026-11-21T10:00:00Z'));
    sut = new AuditTrail(log, clock, metrics);
  });

  /** The trail as the request of `record` calls it: in that request's scope. */
  const inRequest = (record: RequestRecord) => ({
    attempt: (...args: Parameters<AuditTrail['attempt']>) => inRequestScope(record, () => sut.attempt(...args)),
    attemptWith: <R>(...args: Parameters<AuditTrail['attemptWith']>) =>
      inRequestScope(record, () => sut.attemptWith<R>(...(args as Parameters<typeof sut.attemptWith<R>>))),
    calling: <T>(reference: string, call: () => Promise<T>) => inRequestScope(record, () => sut.calling(reference, call)),
    concludeWith: (...args: Parameters<AuditTrail['concludeWith']>) => inRequestScope(record, () => sut.concludeWith(...args)),
  });

  describe('calling: a recorded provider call', () => {
    const later = () => (clock.current = new Date(clock.current.getTime() + 60_000));
    /** The call after its attempted event, as a provider write makes it. */
    const attempted = <T>(record: RequestRecord, reference: string, call: () => Promise<T>) =>
      inRequest(record)
        .attempt('customer.create', { reference })
        .then(() => inRequest(record).calling(reference, call));

    it('when an earlier attempt with the reference has no outcome and the provider has seen it, then EarlierAttemptUnresolved', async () => {
      await inRequest(new RequestRecord('req-crashed')).attempt('customer.create', { reference: 'ref-1' });
      later();

      const retry = attempted(new RequestRecord('req-retry'), 'ref-1', () => Promise.reject(alreadySeen()));

      await expect(retry).rejects.toBeInstanceOf(EarlierAttemptUnresolved);
      await expect(retry).rejects.toMatchObject({ code: 'IDEMPOTENCY.OUTCOME_UNKNOWN', kind: 'conflict' });
    });

    it('when the earlier attempt ended (failed), then the provider’s refusal stands as it is', async () => {
      const first = new RequestRecord('req-failed');
      await inRequest(first).attempt('customer.create', { reference: 'ref-2' });
      await sut.conclude(first, { operation: 'customer.create', phase: 'failed', httpStatus: 502 });
      later();
      const refusal = alreadySeen();

      const retry = attempted(new RequestRecord('req-retry'), 'ref-2', () => Promise.reject(refusal));

      await expect(retry).rejects.toBe(refusal);
    });

    it('when only the request’s own attempt is unresolved, then the provider’s refusal stands', async () => {
      const refusal = alreadySeen();
      const slowRefusal = () => {
        later(); // the provider answers a minute after this request's own attempt
        return Promise.reject(refusal);
      };

      const only = attempted(new RequestRecord('req-only'), 'ref-3', slowRefusal);

      await expect(only).rejects.toBe(refusal);
    });

    it('when the call succeeds, then its value comes back after the attempted event', async () => {
      const value = await attempted(new RequestRecord('req-ok'), 'ref-4', () => Promise.resolve(log.events.length));

      expect(value).toBe(1);
    });
  });

  it('when attempt resolves, then the attempted event is already in the log with the request’s identifiers', async () => {
    const record = new RequestRecord('req-1');
    record.noteArrival('10.0.0.1');
    record.noteClient({ id: 'c-1', name: 'ios-app', tenant: 'acme', role: 'partner' });

    await inRequest(record).attempt('bank_account.create', { reference: 'ref-1', customerId: 'cust-1', currency: 'EUR' });

    expect(log.events).toHaveLength(1);
    expect(log.events[0]).toMatchObject({
      phase: 'attempted',
      operation: 'bank_account.create',
      requestId: 'req-1',
      clientName: 'ios-app',
      sourceIp: '10.0.0.1',
      reference: 'ref-1',
      customerId: 'cust-1',
      currency: 'EUR',
      occurredAt: new Date('2026-11-21T10:00:00Z'),
    });
    expect(record.attempted).toBe(true);
  });

  describe('attemptWith: the attempted event committed by another store’s write', () => {
    it('when the write appends the event, then the request is marked attempted and the write’s answer comes back', async () => {
      const record = new RequestRecord('req-with');

      const answer = await inRequest(record).attemptWith(
        'bank_account.create',
        { reference: 'ref-w1' },
        async (event) => {
          await log.append(event);
          return 'claimed';
        },
        (result) => result === 'claimed',
      );

      expect(answer).toBe('claimed');
      expect(log.events).toEqual([expect.objectContaining({ phase: 'attempted', requestId: 'req-with', reference: 'ref-w1' })]);
      expect(record.attempted).toBe(true);
    });

    it('when the write does not go ahead, then the request is not marked attempted', async () => {
      const record = new RequestRecord('req-held');

      await inRequest(record).attemptWith(
        'bank_account.create',
        { reference: 'ref-w2' },
        () => Promise.resolve('in_flight'),
        (result) => result === 'claimed',
      );

      expect(record.attempted).toBeUndefined();
    });

    it('when the write fails with one of the service’s errors, then that error stands; with another, AuditUnavailable; both counted', async () => {
      const down = new StoreDown();
      const failing = (error: Error) =>
        inRequest(new RequestRecord('req-down')).attemptWith(
          'bank_account.create',
          { reference: 'ref-w3' },
          () => Promise.reject(error),
          () => true,
        );

      await expect(failing(down)).rejects.toBe(down);
      await expect(failing(new Error('duplicate key value'))).rejects.toBeInstanceOf(AuditUnavailable);
      expect(metrics.auditFailures).toBe(2);
    });
  });

  it('when the log cannot be written, then attempt throws AuditUnavailable, the request is not marked attempted, and the failure is counted', async () => {
    log.failing = true;
    const record = new RequestRecord('req-2');

    await expect(inRequest(record).attempt('customer.create', {})).rejects.toBeInstanceOf(AuditUnavailable);
    expect(record.attempted).toBeUndefined();
    expect(metrics.auditFailures).toBe(1);
    // The event that was lost, for an operator to recover: in the error log line.
    expect(logs.lines).toEqual([
      expect.objectContaining({
        level: 'error',
        context: 'AuditTrail',
        message: 'Audit event could not be written',
        fields: expect.objectContaining({ auditEvent: expect.objectContaining({ requestId: 'req-2' }) }),
      }),
    ]);
  });

  it('when a staff member’s search cannot be written, then its log line names them by id only: no display name, no reason, while the audit event holds both', async () => {
    const record = new RequestRecord('req-staff');
    record.noteClient({ id: 'emp-4711', name: 'Sam Support', tenant: ALL_TENANTS, role: 'staff', staff: { roles: ['support'], secondFactor: true } });
    record.noteStaffRoles(['support']);
    record.noteAccessReason('SUP-1 Jane Doe called about her card');
    log.failing = true;

    await expect(sut.conclude(record, { operation: 'audit.query', phase: 'succeeded', httpStatus: 200 })).rejects.toBeInstanceOf(AuditUnavailable);
    log.failing = false;
    const written = new RequestRecord('req-staff-2');
    written.noteClient({ id: 'emp-4711', name: 'Sam Support', tenant: ALL_TENANTS, role: 'staff', staff: { roles: ['support'], secondFactor: true } });
    written.noteAccessReason('SUP-1 Jane Doe called about her card');
    await sut.conclude(written, { operation: 'audit.query', phase: 'succeeded', httpStatus: 200 });

    const line = JSON.stringify(logs.lines);
    expect(line).toContain('emp-4711');
    expect(line).not.toContain('Sam Support');
    expect(line).not.toContain('Jane Doe');
    expect(log.events[0]).toMatchObject({
      callerKind: 'staff',
      staffId: 'emp-4711',
      clientName: 'Sam Support',
      accessReason: 'SUP-1 Jane Doe called about her card',
    });
    expect(log.events[0].clientId).toBeUndefined();
    expect(log.events[0].tenant).toBeUndefined();
  });

  it('when conclude is called twice, then only one terminal event is written', async () => {
    const record = new RequestRecord('req-3');
    record.noteUpstreamCall({ status: 502, errorId: 'UP-1', latencyMs: 12 });

    await sut.conclude(record, { operation: 'balance.read', phase: 'failed', httpStatus: 502, errorId: 'e-1' });
    await sut.conclude(record, { operation: 'balance.read', phase: 'failed', httpStatus: 502, errorId: 'e-1' });

    expect(log.events).toHaveLength(1);
    expect(log.events[0]).toMatchObject({ phase: 'failed', upstreamStatus: 502, upstreamErrorId: 'UP-1', upstreamLatencyMs: 12 });
  });

  it('when an error message is long, then it is cut to the column’s 500 characters', async () => {
    await sut.conclude(new RequestRecord('req-4'), { operation: 'balance.read', phase: 'rejected', httpStatus: 400, errorMessage: 'x'.repeat(900) });

    expect(log.events[0].errorMessage).toHaveLength(500);
  });

  describe('concludeWith: the terminal event committed with another store’s write', () => {
    /** A write that records what it was given, fails with `failWith` when set, and holds when `holds`. */
    const along = (options: { failWith?: Error; holds?: DomainError } = {}) => {
      const seen = { written: [] as string[], alone: 0, held: [] as string[] };
      return {
        seen,
        write: (event: { phase: string }) =>
          options.failWith ? Promise.reject(options.failWith) : (seen.written.push(event.phase), Promise.resolve(undefined)),
        writeAlone: () => ((seen.alone += 1), Promise.resolve()),
        hold: (event: { phase: string }) => (options.holds ? (seen.held.push(event.phase), options.holds) : undefined),
      };
    };

    it('when the request is concluded, then its event goes through the write, not the log on its own', async () => {
      const record = new RequestRecord('req-with');
      const write = along();
      inRequest(record).concludeWith(write);

      await sut.conclude(record, { operation: 'bank_account.create', phase: 'succeeded', httpStatus: 201 });

      expect(write.seen.written).toEqual(['succeeded']);
      expect(log.events).toEqual([]);
    });

    it('when the write fails and it holds both, then its answer is what the request gets, and nothing is counted as lost', async () => {
      const record = new RequestRecord('req-held');
      const pending = new StoreDown();
      const write = along({ failWith: new StoreDown(), holds: pending });
      inRequest(record).concludeWith(write);

      await expect(sut.conclude(record, { operation: 'bank_account.create', phase: 'succeeded', httpStatus: 201 })).rejects.toBe(pending);

      expect(write.seen.held).toEqual(['succeeded']);
      expect(metrics.auditFailures).toBe(0);
    });

    it('when the write fails and it does not hold them, then the request fails closed and the event is logged as lost', async () => {
      const record = new RequestRecord('req-lost');
      inRequest(record).concludeWith(along({ failWith: new Error('duplicate key value') }));

      await expect(sut.conclude(record, { operation: 'bank_account.create', phase: 'succeeded', httpStatus: 201 })).rejects.toBeInstanceOf(AuditUnavailable);

      expect(metrics.auditFailures).toBe(1);
      expect(logs.lines.map((line) => line.message)).toEqual(['Audit event could not be written']);
    });

    it('when the request was concluded already (answered before its provider call ended), then the write goes alone, at once', async () => {
      const record = new RequestRecord('req-early');
      await sut.conclude(record, { operation: 'bank_account.create', phase: 'unknown', httpStatus: 504 });
      const write = along();

      inRequest(record).concludeWith(write);
      await new Promise((resolve) => setImmediate(resolve));

      expect(write.seen).toEqual({ written: [], alone: 1, held: [] });
      expect(log.events.map((event) => event.phase)).toEqual(['unknown']);
    });
  });
});
