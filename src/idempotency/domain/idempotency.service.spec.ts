import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { AuditEvent } from '../../audit/trail/domain/audit-event';
import { CountingMetrics, FixedClock, InMemoryAuditLog, InMemoryIdempotencyStore, RecordingLogger, idempotencyService } from '../../../test/support/fakes';
import { HeldOutcomes } from './held-outcomes';
import { ClaimEnding, IdempotencyService } from './idempotency.service';
import { OutcomePending, ReferenceInFlight, ReferenceReused, ReferenceTaken } from './idempotency.errors';

const REFERENCE = '7d0c1f6e-5a43-4c1e-9b2a-2f6d8e0b9c11';
const mine = { clientId: 'client-a', reference: REFERENCE };
const theirs = { clientId: 'client-b', reference: REFERENCE };

describe(IdempotencyService.name, () => {
  let store: InMemoryIdempotencyStore;
  let metrics: CountingMetrics;
  let logger: RecordingLogger;
  let sut: IdempotencyService;
  let held: HeldOutcomes;
  let log: InMemoryAuditLog;
  let clock: FixedClock;

  beforeEach(() => {
    log = new InMemoryAuditLog();
    store = new InMemoryIdempotencyStore(log);
    metrics = new CountingMetrics();
    logger = new RecordingLogger();
    Logger.overrideLogger(logger);
    clock = new FixedClock();
    ({ service: sut, held } = idempotencyService(store, clock, metrics));
  });

  afterAll(() => {
    Logger.overrideLogger(false);
  });

  describe('run', () => {
    it('when a reference is new, then the work runs once and its result is stored for replay', async () => {
      let runs = 0;

      const first = await sut.run(mine, 'customer.create', 'f1', async () => ({ n: ++runs }));
      const again = await sut.run(mine, 'customer.create', 'f1', async () => ({ n: ++runs }));

      expect(first).toEqual({ value: { n: 1 }, replayed: false });
      expect(again).toEqual({ value: { n: 1 }, replayed: true });
      expect(runs).toBe(1);
      expect(metrics.replays).toEqual(['customer.create']);
    });

    it('when the same client sends the reference with another body, then ReferenceReused and no work', async () => {
      await sut.run(mine, 'customer.create', 'f1', async () => 'done');

      await expect(sut.run(mine, 'customer.create', 'f2', async () => 'again')).rejects.toBeInstanceOf(ReferenceReused);
    });

    it('when another client sends a used reference, then ReferenceTaken, whatever the body', async () => {
      await sut.run(mine, 'customer.create', 'f1', async () => 'done');

      await expect(sut.run(theirs, 'customer.create', 'f1', async () => 'theirs')).rejects.toBeInstanceOf(ReferenceTaken);
    });

    it('when the first request is still in flight, then a duplicate gets ReferenceInFlight', async () => {
      let release!: () => void;
      const first = sut.run(mine, 'customer.create', 'f1', () => new Promise<string>((resolve) => (release = () => resolve('done'))));

      await expect(sut.run(mine, 'customer.create', 'f1', async () => 'dup')).rejects.toBeInstanceOf(ReferenceInFlight);
      release();
      await expect(first).resolves.toEqual({ value: 'done', replayed: false });
    });

    it('when the work fails, then the reference is released and the same body may be retried', async () => {
      await expect(sut.run(mine, 'customer.create', 'f1', () => Promise.reject(new Error('provider down')))).rejects.toThrow('provider down');

      await expect(sut.run(mine, 'customer.create', 'f1', async () => 'second try')).resolves.toEqual({
        value: 'second try',
        replayed: false,
      });
    });

    it('when the work fails and releasing the reference fails too, then the work’s error is what the caller gets, and the release failure is logged', async () => {
      store.failRelease = true;

      await expect(sut.run(mine, 'customer.create', 'f1', () => Promise.reject(new Error('provider down')))).rejects.toThrow('provider down');

      expect(logger.lines.filter((line) => line.level === 'warn').map((line) => line.context[0])).toEqual(['Could not release an idempotency key']);
      expect(store.rows.get(REFERENCE)?.state).toBe('in_flight');
    });
  });

  /**
   * With write-behind, as a provider write runs: the result (or release) is handed over, to be
   * written with the request's terminal event; `ended` holds what was handed over.
   */
  describe('run, its end written with the request’s terminal event', () => {
    let ended: ClaimEnding[];
    const writeBehind = (ending: ClaimEnding) => void ended.push(ending);
    const terminal = (phase: AuditEvent['phase'], requestId = randomUUID()): AuditEvent => ({
      id: randomUUID(),
      occurredAt: clock.now(),
      requestId,
      operation: 'bank_account.create',
      phase,
      reference: REFERENCE,
      httpStatus: 201,
    });
    const run = (work: () => Promise<unknown>, body = 'f1') => sut.run(mine, 'bank_account.create', body, work, { writeBehind });

    beforeEach(() => (ended = []));

    it('when the work succeeds, then nothing is stored until the ending is written, and then the result and the event are, together', async () => {
      await run(async () => 'account-1');
      expect(store.rows.get(REFERENCE)?.state).toBe('in_flight');

      await ended[0].write(terminal('succeeded'));

      expect(store.rows.get(REFERENCE)).toMatchObject({ state: 'completed', result: 'account-1' });
      expect(log.events.map((event) => event.phase)).toEqual(['succeeded']);
    });

    it('when the database does not take the ending, then it is held, the request is answered OUTCOME_PENDING under the id its held event names, and a retry here gets the result', async () => {
      await run(async () => 'account-1');
      store.down = true;
      const event = terminal('succeeded');
      const failure = await ended[0].write(event).catch((error: unknown) => error);

      const answer = ended[0].hold(event, failure);
      const retry = await run(async () => 'account-2');

      expect(answer).toBeInstanceOf(OutcomePending);
      expect(answer).toMatchObject({ code: 'IDEMPOTENCY.OUTCOME_PENDING', retryAfterSeconds: 1, errorId: expect.any(String) });
      expect(held.find(REFERENCE)?.event).toMatchObject({
        phase: 'succeeded',
        httpStatus: 503,
        errorCode: 'IDEMPOTENCY.OUTCOME_PENDING',
        errorId: answer!.errorId,
      });
      expect(retry).toEqual({ value: 'account-1', replayed: true });
      expect(metrics.held).toBe(1);
    });

    it('when the database answers again, then the held ending is written (result and event) and a retry is answered by the store', async () => {
      await run(async () => 'account-1');
      store.down = true;
      const event = terminal('succeeded');
      ended[0].hold(event, await ended[0].write(event).catch((error: unknown) => error));
      store.down = false;

      const retry = await run(async () => 'account-2');

      expect(retry).toEqual({ value: 'account-1', replayed: true });
      expect(held.size).toBe(0);
      expect(store.rows.get(REFERENCE)).toMatchObject({ state: 'completed', result: 'account-1' });
      expect(log.events).toEqual([expect.objectContaining({ phase: 'succeeded', httpStatus: 503, errorCode: 'IDEMPOTENCY.OUTCOME_PENDING' })]);
      expect(metrics.writtenLate).toHaveLength(1);
      expect(metrics.held).toBe(0);
    });

    it('when a held ending is a release, then a retry here while the database is away is told so, and once it answers the retry goes through', async () => {
      await run(() => Promise.reject(new Error('provider refused'))).catch(() => undefined);
      store.down = true;
      const event = { ...terminal('rejected'), httpStatus: 502 };
      const failure = await ended[0].write(event).catch((error: unknown) => error);
      const answer = ended[0].hold(event, failure);

      const whileDown = await run(async () => 'account-1').catch((error: unknown) => error);
      store.down = false;
      const afterwards = await run(async () => 'account-1');

      expect(answer).toMatchObject({ code: 'DATABASE.UNAVAILABLE' });
      expect(whileDown).toMatchObject({ code: 'DATABASE.UNAVAILABLE' });
      expect(afterwards).toEqual({ value: 'account-1', replayed: false });
    });

    it('when the held ending is asked for by another client or with another body, then it is refused as the store would', async () => {
      await run(async () => 'account-1');
      store.down = true;
      const event = terminal('succeeded');
      ended[0].hold(event, await ended[0].write(event).catch((error: unknown) => error));

      await expect(sut.run(theirs, 'bank_account.create', 'f1', async () => 'x')).rejects.toBeInstanceOf(ReferenceTaken);
      await expect(run(async () => 'x', 'f2')).rejects.toBeInstanceOf(ReferenceReused);
    });

    it('when the ending fails for another reason than an outage, then it is not held', async () => {
      await run(async () => 'account-1');

      expect(ended[0].hold(terminal('succeeded'), new Error('value too long'))).toBeUndefined();
      expect(held.size).toBe(0);
    });

    it('when the claim itself meets an outage, then its release is handed over (the claim may have committed unseen) and the outage is what the caller gets', async () => {
      store.down = true;

      await expect(run(async () => 'account-1')).rejects.toMatchObject({ code: 'DATABASE.UNAVAILABLE' });

      expect(ended.map((ending) => ending.ending)).toEqual([{ kind: 'released' }]);
    });
  });

  describe('run, while another attempt holds the reference', () => {
    const since = (msAgo: number) => new Date(clock.now().getTime() - msAgo);
    const holdBy = (claimedAt: Date) =>
      store.rows.set(REFERENCE, {
        clientId: mine.clientId,
        fingerprint: 'f1',
        state: 'in_flight',
        claimedAt,
        lockedUntil: new Date(claimedAt.getTime() + 60_000),
      });

    it('when it may still be working (claimed within workMs), then IN_FLIGHT with a Retry-After of a second', async () => {
      holdBy(since(29_000));

      await expect(sut.run(mine, 'customer.create', 'f1', async () => 'dup')).rejects.toMatchObject({ code: 'IDEMPOTENCY.IN_FLIGHT', retryAfterSeconds: 1 });
    });

    it('when it is past the longest a request can take, then it is not in flight: OUTCOME_PENDING, to retry', async () => {
      holdBy(since(31_000));

      await expect(sut.run(mine, 'customer.create', 'f1', async () => 'dup')).rejects.toMatchObject({
        code: 'IDEMPOTENCY.OUTCOME_PENDING',
        retryAfterSeconds: 1,
      });
    });

    it('when it ends while the duplicate waits (settleWaitMs), then the duplicate gets its result, not IN_FLIGHT', async () => {
      ({ service: sut } = idempotencyService(store, clock, metrics, { settleWaitMs: 2000 }));
      holdBy(since(0));
      setTimeout(() => store.rows.set(REFERENCE, { ...store.rows.get(REFERENCE)!, state: 'completed', result: 'account-1' }), 250);

      await expect(sut.run(mine, 'customer.create', 'f1', async () => 'dup')).resolves.toEqual({ value: 'account-1', replayed: true });
    });

    it('when it is released while the duplicate waits, then the duplicate claims it and does the work', async () => {
      ({ service: sut } = idempotencyService(store, clock, metrics, { settleWaitMs: 2000 }));
      holdBy(since(0));
      setTimeout(() => store.rows.set(REFERENCE, { ...store.rows.get(REFERENCE)!, state: 'retryable' }), 250);

      await expect(sut.run(mine, 'customer.create', 'f1', async () => 'done here')).resolves.toEqual({ value: 'done here', replayed: false });
    });
  });
});
