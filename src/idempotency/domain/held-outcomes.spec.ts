import { randomUUID } from 'node:crypto';
import { CountingMetrics, databaseDown, FixedClock } from '../../../test/support/fakes';
import { nestLogsOfEachTest } from '../../../test/support/nest-logs';
import { DomainError } from '../../common/domain/domain-error';
import { HeldOutcome, HeldOutcomes } from './held-outcomes';

const isOutage = (error: unknown) => error instanceof DomainError && error.code === 'DATABASE.UNAVAILABLE';

describe(HeldOutcomes.name, () => {
  const logs = nestLogsOfEachTest();
  let clock: FixedClock;
  let metrics: CountingMetrics;
  let sut: HeldOutcomes;
  /** Whether the database takes writes; the order they were written in. */
  let up: boolean;
  let written: string[];

  const outcome = (reference: string, write?: () => Promise<void>): HeldOutcome => ({
    key: { clientId: 'client-a', reference },
    fingerprint: 'f1',
    ending: { kind: 'completed', result: reference },
    event: { id: randomUUID(), occurredAt: clock.now(), requestId: `req-${reference}`, operation: 'bank_account.create', phase: 'succeeded', reference },
    heldAt: clock.now().getTime(),
    write:
      write ??
      (() => {
        if (!up) return Promise.reject(databaseDown());
        written.push(reference);
        return Promise.resolve();
      }),
  });

  beforeEach(() => {
    clock = new FixedClock();
    metrics = new CountingMetrics();
    up = false;
    written = [];
    sut = new HeldOutcomes({ max: 3, retryEveryMs: 20 }, isOutage, clock, metrics);
  });

  afterEach(() => sut.drain(Date.now()));

  it('when outcomes are held and the database comes back, then they are written on their own, oldest first, and the count falls to 0', async () => {
    for (const reference of ['a', 'b', 'c']) sut.hold(outcome(reference));
    expect(metrics.held).toBe(3);

    clock.current = new Date(clock.current.getTime() + 5000);
    up = true;
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(written).toEqual(['a', 'b', 'c']);
    expect(sut.size).toBe(0);
    expect(metrics.held).toBe(0);
    expect(metrics.writtenLate).toEqual([5, 5, 5]);
    expect(logs.lines.filter((line) => line.message === 'A held outcome was written late')).toHaveLength(3);
  });

  it('when as many as allowed are held, then one more is refused (its request fails as the outage does)', () => {
    for (const reference of ['a', 'b', 'c']) expect(sut.hold(outcome(reference))).toBe(true);

    expect(sut.hold(outcome('d'))).toBe(false);
    expect(sut.find('d')).toBeUndefined();
  });

  it('when a retry asks for one, then it is written at once if the database takes it, and found until then', async () => {
    sut.hold(outcome('a'));

    expect(await sut.writeNow('a')).toBe(false);
    expect(sut.find('a')).toBeDefined();
    up = true;
    expect(await sut.writeNow('a')).toBe(true);
    expect(sut.find('a')).toBeUndefined();
    expect(await sut.writeNow('never-held')).toBe(true);
  });

  it('when the database refuses one for good (not an outage), then it is dropped and logged whole, and the rest are written', async () => {
    up = true;
    sut.hold(outcome('bad', () => Promise.reject(new Error('value too long'))));
    sut.hold(outcome('good'));

    await sut.flush();

    expect(written).toEqual(['good']);
    expect(sut.size).toBe(0);
    expect(metrics.auditFailures).toBe(1);
    expect(logs.lines.find((line) => line.message === 'A held outcome was refused by the database: dropped')?.fields).toMatchObject({
      auditEvent: expect.objectContaining({ reference: 'bad' }),
    });
  });

  it('when the process shuts down with outcomes held, then it writes them within the deadline; what it cannot is logged for reconciliation', async () => {
    sut.hold(outcome('a'));
    setTimeout(() => (up = true), 50);

    await sut.drain(Date.now() + 1000);
    sut.hold(outcome('b'));
    up = false;
    await sut.drain(Date.now() + 60);

    expect(written).toEqual(['a']);
    expect(
      logs.lines.filter((line) => line.message === 'Shutting down with a provider write’s outcome unwritten: reconciliation will find its attempt'),
    ).toEqual([expect.objectContaining({ level: 'error', fields: expect.objectContaining({ reference: 'b' }) })]);
  });
});
