import { BackgroundWork } from '../../common/domain/background-work';
import { randomUUID } from 'node:crypto';
import { CountingMetrics, FixedClock, InMemoryAuditLog } from '../../../test/support/fakes';
import { AuditEvent } from '../trail/domain/audit-event';
import { UnresolvedCalls } from './domain/unresolved-calls.service';
import { UnresolvedCallsCount } from './unresolved-calls.schedule';

describe(UnresolvedCallsCount.name, () => {
  const clock = new FixedClock();
  const minutesAgo = (minutes: number) => new Date(clock.current.getTime() - minutes * 60_000);
  const attempt = (occurredAt: Date, reference = randomUUID()): AuditEvent => ({
    id: randomUUID(),
    occurredAt,
    requestId: randomUUID(),
    operation: 'customer.create',
    phase: 'attempted',
    reference,
  });

  it('when calls have no outcome, then the metric is told how many are old enough to reconcile', async () => {
    const log = new InMemoryAuditLog();
    const metrics = new CountingMetrics();
    const sut = new UnresolvedCallsCount(new UnresolvedCalls(log, clock), metrics, new BackgroundWork('all'));
    await sut.count();

    log.events.push(attempt(minutesAgo(10)), attempt(minutesAgo(5)));
    // Still in flight, perhaps: younger than the listing's minute.
    log.events.push(attempt(minutesAgo(0.5)));
    // Settled: it succeeded.
    const settled = attempt(minutesAgo(20));
    log.events.push(settled, { ...settled, id: randomUUID(), phase: 'succeeded' });
    await sut.count();

    expect(metrics.unresolved).toEqual([0, 2]);
  });
});
