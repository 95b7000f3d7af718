import { CountingMetrics, FixedClock, InMemoryAuditLog } from '../../../test/support/fakes';
import { newRecord, RequestRecord, runWithRecord } from '../../common/domain/request-record';
import { AuditTrail } from './audit-trail.service';
import { AuditUnavailable } from './audit.errors';



describe('AuditTrail', () => {
  let log: InMemoryAuditLog;
  let metrics: CountingMetrics;
  let sut: AuditTrail;

  beforeEach(() => {
    log = new InMemoryAuditLog();
    metrics = new CountingMetrics();
    sut = new AuditTrail(log, new FixedClock(new Date('2026-11-21T10:00:00Z')), metrics);
  });

  it('when attempt resolves, then the attempted event is already in the log with the request’s identifiers', async () => {
    const context: RequestRecord = { ...newRecord('req-1'), sourceIp: '10.0.0.1', client: { id: 'c-1', name: 'ios-app', tenant: 'acme', role: 'partner' } };

    await runWithRecord(context, () => sut.attempt('bank_account.create', { reference: 'ref-1', customerId: 'cust-1', currency: 'EUR' }));

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
    expect(context.attempted).toBe(true);
  });

  it('when the log cannot be written, then attempt throws AuditUnavailable, the request is not marked attempted, and the failure is counted', async () => {
    log.failing = true;
    const context = newRecord('req-2');

    await expect(runWithRecord(context, () => sut.attempt('customer.create', {}))).rejects.toBeInstanceOf(AuditUnavailable);
    expect(context.attempted).toBeUndefined();
    expect(metrics.auditFailures).toBe(1);
  });

  it('when conclude is called twice, then only one terminal event is written', async () => {
    const context: RequestRecord = { ...newRecord('req-3'), upstream: { status: 502, errorId: 'UP-1', latencyMs: 12 } };

    await sut.conclude(context, { operation: 'balance.read', phase: 'failed', httpStatus: 502, errorId: 'e-1' });
    await sut.conclude(context, { operation: 'balance.read', phase: 'failed', httpStatus: 502, errorId: 'e-1' });

    expect(log.events).toHaveLength(1);
    expect(log.events[0]).toMatchObject({ phase: 'failed', upstreamStatus: 502, upstreamErrorId: 'UP-1', upstreamLatencyMs: 12 });
  });

  it('when an error message is long, then it is cut to the column’s 500 characters', async () => {
    await sut.conclude(newRecord('req-4'), { operation: 'balance.read', phase: 'rejected', httpStatus: 400, errorMessage: 'x'.repeat(900) });

    expect(log.events[0].errorMessage).toHaveLength(500);
  });
});
