import { Logger } from '@nestjs/common';
import { CountingMetrics, FixedClock, InMemoryIdempotencyStore, RecordingLogger } from '../../../test/support/fakes';
import { IdempotencyService } from './idempotency.service';
import { ReferenceInFlight, ReferenceReused, ReferenceTaken } from './idempotency.errors';

const REFERENCE = '7d0c1f6e-5a43-4c1e-9b2a-2f6d8e0b9c11';
const mine = { clientId: 'client-a', reference: REFERENCE };
const theirs = { clientId: 'client-b', reference: REFERENCE };

describe(IdempotencyService.name, () => {
  let store: InMemoryIdempotencyStore;
  let metrics: CountingMetrics;
  let logger: RecordingLogger;
  let sut: IdempotencyService;

  beforeEach(() => {
    store = new InMemoryIdempotencyStore();
    metrics = new CountingMetrics();
    logger = new RecordingLogger();
    Logger.overrideLogger(logger);
    const clock = new FixedClock();
    sut = new IdempotencyService(store, clock, { ttlMs: 86_400_000, lockMs: 60_000 }, metrics);
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
});
