import { Logger, LoggerService } from '@nestjs/common';
import fc from 'fast-check';
import { GroupCommit } from './group-commit';

/** A writer that records each batch and lets the test decide when each one finishes. */
function controlledWriter(refuse: (row: number) => boolean = () => false) {
  const batches: number[][] = [];
  const pending: (() => void)[] = [];
  const writeRows = (rows: number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(rows);
      pending.push(() => (rows.some(refuse) ? reject(new Error(`refused ${rows.join(',')}`)) : resolve()));
    });
  /** Finishes every write started so far, and lets the promise callbacks run. */
  const finishAll = async () => {
    while (pending.length > 0) {
      pending.splice(0).forEach((finish) => finish());
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { batches, writeRows, finishAll, inFlight: () => pending.length };
}

/** What is logged as an error until `restore`, instead of being printed. */
function collectedErrors() {
  const before = (Logger as unknown as { staticInstanceRef?: LoggerService }).staticInstanceRef;
  const errors: unknown[][] = [];
  const ignored = () => undefined;
  Logger.overrideLogger({ log: ignored, warn: ignored, error: (...args: unknown[]) => errors.push(args) });
  const restore = (): void => {
    Logger.overrideLogger(before ?? false);
  };
  return { errors, restore };
}

/** Once the event loop's current turn has run: a batch due then has started. */
const turnEnded = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('when nothing else is being written, then a row is written at once and alone', async () => {
    const writer = controlledWriter();
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 10, maxInFlight: 1, isRowError: () => true });

    const written = commits.write(1);

    expect(writer.batches).toEqual([[1]]);
    await writer.finishAll();
    await expect(written).resolves.toBeUndefined();
  });

  it('when rows arrive while a write is in flight, then they wait and go together, in order', async () => {
    const writer = controlledWriter();
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 10, maxInFlight: 1, isRowError: () => true });

    const all = [1, 2, 3, 4].map((row) => commits.write(row));
    expect(writer.batches).toEqual([[1]]);
    await writer.finishAll();

    await expect(Promise.all(all)).resolves.toHaveLength(4);
    expect(writer.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('when more rows wait than a batch holds, then batches are capped and no more than maxInFlight run at once', async () => {
    const writer = controlledWriter();
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 3, maxInFlight: 2, isRowError: () => true });

    const all = Array.from({ length: 11 }, (_, row) => commits.write(row));
    await turnEnded();
    expect(writer.inFlight()).toBe(2);
    await writer.finishAll();

    await Promise.all(all);
    expect(writer.batches).toEqual([[0], [1, 2, 3], [4, 5, 6], [7, 8, 9], [10]]);
  });

  it('when rows arrive in one turn of the event loop while a write is in flight, then they go together once it has run, not each alone in a free slot', async () => {
    const writer = controlledWriter();
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 10, maxInFlight: 2, isRowError: () => true });

    const all = [1, 2, 3, 4].map((row) => commits.write(row));
    expect(writer.batches).toEqual([[1]]);
    await turnEnded();
    expect(writer.batches).toEqual([[1], [2, 3, 4]]);

    await writer.finishAll();
    await expect(Promise.all(all)).resolves.toHaveLength(4);
    expect(writer.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('when rows with the same key wait together, then each batch holds one of them, and the others go in later batches, in order', async () => {
    const writer = controlledWriter();
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 10, maxInFlight: 1, isRowError: () => true, keyOf: (row: number) => String(row % 10) });

    const all = [1, 2, 11, 3, 21, 12].map((row) => commits.write(row));
    await writer.finishAll();

    await Promise.all(all);
    expect(writer.batches).toEqual([[1], [2, 11, 3], [21, 12]]);
  });

  it('when two batches may run side by side, then a row waits while its key is in the other, and goes once that one ends', async () => {
    const writer = controlledWriter();
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 10, maxInFlight: 2, isRowError: () => true, keyOf: (row: number) => String(row % 10) });

    const first = commits.write(1);
    const second = commits.write(11);
    expect(writer.batches).toEqual([[1]]);
    const third = commits.write(2);
    await turnEnded();
    expect(writer.batches).toEqual([[1], [2]]);

    await writer.finishAll();
    await Promise.all([first, second, third]);
    expect(writer.batches).toEqual([[1], [2], [11]]);
  });

  it('when a batch is refused because of one row, then only that row fails and the others are written', async () => {
    const writer = controlledWriter((row) => row === 3);
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 10, maxInFlight: 1, isRowError: () => true });

    const settled = Promise.allSettled([1, 2, 3, 4].map((row) => commits.write(row)));
    await writer.finishAll();
    const outcomes = await settled;

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toEqual(new Error('refused 3'));
    expect(writer.batches).toEqual([[1], [2, 3, 4], [2, 3], [2], [3], [4]]);
  });

  it('when a large batch is refused because of one row, then it is split in halves down to that row, not written row by row', async () => {
    const rows = Array.from({ length: 200 }, (_, index) => index);
    for (const bad of [0, 77, 199]) {
      const writer = controlledWriter((row) => row === bad);
      const commits = new GroupCommit(writer.writeRows, { maxBatch: 200, maxInFlight: 1, isRowError: () => true });

      const settled = Promise.allSettled(rows.map((row) => commits.write(row)));
      await writer.finishAll();
      const outcomes = await settled;

      expect(outcomes.flatMap((outcome, row) => (outcome.status === 'rejected' ? [row] : []))).toEqual([bad]);
      // The first row goes alone, the other 199 together: then halves, 1 + 2 × 8 statements at most, where row by row took 200.
      expect(writer.batches[1]).toHaveLength(199);
      expect(writer.batches.length - 1).toBeLessThanOrEqual(17);
      // Every row but the bad one was written once in a statement that succeeded.
      const written = writer.batches.filter((batch) => !batch.includes(bad)).flat();
      expect(written.sort((a, b) => a - b)).toEqual(rows.filter((row) => row !== bad));
    }
  });

  it('when many rows of a batch are refused, then its retries cost at most 1 + n + 2 × ⌈log2 n⌉ statements, not the 2n − 1 of halving alone', async () => {
    for (const refused of [(row: number) => row > 0, (row: number) => row % 4 === 1, (row: number) => row % 16 === 1]) {
      const writer = controlledWriter(refused);
      const commits = new GroupCommit(writer.writeRows, { maxBatch: 200, maxInFlight: 1, isRowError: () => true });

      const settled = Promise.allSettled(Array.from({ length: 201 }, (_, row) => commits.write(row)));
      await writer.finishAll();
      const outcomes = await settled;

      // [0] alone (nothing was in flight), then the other 200 together, refused, and their retries.
      expect(writer.batches[1]).toHaveLength(200);
      expect(writer.batches.length - 1).toBeLessThanOrEqual(1 + 200 + 2 * 8);
      expect(outcomes.map((outcome, row) => (outcome.status === 'rejected') === refused(row))).not.toContain(false);
    }
  });

  it('when any rows of a batch are refused, then each row is settled once, as its own data says, within the budget', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 120 }), fc.func(fc.boolean()), async (size, refusedBy) => {
        const refused = (row: number) => row > 0 && refusedBy(row);
        const writer = controlledWriter(refused);
        const commits = new GroupCommit(writer.writeRows, { maxBatch: 200, maxInFlight: 1, isRowError: () => true });
        const settledCount = new Map<number, number>();
        const settle = (row: number) => settledCount.set(row, (settledCount.get(row) ?? 0) + 1);

        const settled = Promise.allSettled(Array.from({ length: size + 1 }, (_, row) => commits.write(row).finally(() => settle(row))));
        await writer.finishAll();
        const outcomes = await settled;

        expect(outcomes.map((outcome, row) => (outcome.status === 'rejected') === refused(row))).not.toContain(false);
        expect([...settledCount.values()].every((count) => count === 1) && settledCount.size === size + 1).toBe(true);
        expect(writer.batches.length - 1).toBeLessThanOrEqual(1 + size + 2 * Math.ceil(Math.log2(size)));
        // A row that is written in a statement that succeeded is never refused, and one refused never written.
        const written = new Set(writer.batches.filter((batch) => !batch.some(refused)).flat());
        expect(outcomes.every((outcome, row) => written.has(row) === (outcome.status === 'fulfilled'))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('when the database goes away while a refused batch’s rows are written alone, then the rest fail at once, not one statement each', async () => {
    let statements = 0;
    const commits = new GroupCommit<number>(
      async () => {
        statements++;
        await new Promise((resolve) => setImmediate(resolve));
        // Every row refused for its data, until the 41st statement: from then on the database is gone.
        throw statements >= 41 ? new Error('connection lost') : Object.assign(new Error('refused'), { refused: true });
      },
      { maxBatch: 200, maxInFlight: 1, isRowError: (error) => (error as { refused?: boolean }).refused === true },
    );

    const outcomes = await Promise.allSettled(Array.from({ length: 201 }, (_, row) => commits.write(row)));

    expect(statements).toBe(41);
    const reasons = outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : 'ok'));
    expect(reasons.filter((reason) => reason === 'refused').length + reasons.filter((reason) => reason === 'connection lost').length).toBe(201);
    expect(reasons.filter((reason) => reason === 'connection lost').length).toBeGreaterThan(100);
  });

  it('when a refused batch is split, then the rows of a half written together each get their own answer', async () => {
    const commits = new GroupCommit<number, string>(
      async (rows) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (rows.includes(3)) throw new Error('refused 3');
        return rows.map((row) => `row ${row} of ${rows.join('+')}`);
      },
      { maxBatch: 10, maxInFlight: 1, isRowError: () => true },
    );

    const outcomes = await Promise.allSettled([0, 1, 2, 3, 4, 5, 6, 7, 8].map((row) => commits.write(row)));

    // [0] alone; [1..8] refused; [1, 2, 3, 4] refused; [1, 2]; [3, 4] refused; [3] refused; [4]; [5, 6, 7, 8].
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : 'refused'))).toEqual([
      'row 0 of 0',
      'row 1 of 1+2',
      'row 2 of 1+2',
      'refused',
      'row 4 of 4',
      'row 5 of 5+6+7+8',
      'row 6 of 5+6+7+8',
      'row 7 of 5+6+7+8',
      'row 8 of 5+6+7+8',
    ]);
  });

  it('when two rows of a batch are refused, then both fail and every other row is written', async () => {
    const writer = controlledWriter((row) => row === 3 || row === 40);
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 200, maxInFlight: 1, isRowError: () => true });

    const settled = Promise.allSettled(Array.from({ length: 64 }, (_, row) => commits.write(row)));
    await writer.finishAll();
    const outcomes = await settled;

    expect(outcomes.flatMap((outcome, row) => (outcome.status === 'rejected' ? [row] : []))).toEqual([3, 40]);
    // [0] alone, [1..63] refused, then one bad row in each half of 32 and 31: 1 + 1 + 2 × (1 + 2 × 5), where row by row took 65.
    expect(writer.batches.length).toBeLessThanOrEqual(24);
  });

  it('when a retry fails for a reason that is not its data, then it and every row not yet written get that error, without a statement each', async () => {
    // [0] alone; [1..5] refused; [1, 2, 3] refused; [1, 2] refused; [1]; [2] refused alone; then
    // the connection is lost for the next statement, [3]: [4, 5] are not sent.
    let loseNext = false;
    const batches: number[][] = [];
    const writeRows = async (rows: number[]) => {
      batches.push(rows);
      await new Promise((resolve) => setImmediate(resolve));
      if (loseNext) {
        loseNext = false;
        throw new Error('connection lost');
      }
      if (rows.includes(2)) {
        loseNext = rows.length === 1;
        throw Object.assign(new Error('refused'), { refused: true });
      }
    };
    const commits = new GroupCommit(writeRows, { maxBatch: 10, maxInFlight: 1, isRowError: (error) => (error as { refused?: boolean }).refused === true });

    const outcomes = await Promise.allSettled([0, 1, 2, 3, 4, 5].map((row) => commits.write(row)));

    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? 'ok' : (outcome.reason as Error).message))).toEqual([
      'ok',
      'ok',
      'refused',
      'connection lost',
      'connection lost',
      'connection lost',
    ]);
    expect(batches).toEqual([[0], [1, 2, 3, 4, 5], [1, 2, 3], [1, 2], [1], [2], [3]]);
  });

  it('when a batch fails for a reason that is not its data, then every caller gets that error and nothing is retried', async () => {
    const writer = controlledWriter((row) => row >= 2);
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 10, maxInFlight: 1, isRowError: () => false });

    const settled = Promise.allSettled([1, 2, 3, 4].map((row) => commits.write(row)));
    await writer.finishAll();
    const outcomes = await settled;

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    expect(writer.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('when judging a failure throws, then every caller of that batch gets the failure rather than waiting for ever, and later rows are still written', async () => {
    const writer = controlledWriter((row) => row >= 2);
    // A judgement whose error quotes the rows, as a database's error may.
    const isRowError = () => {
      throw new TypeError('cannot judge: row "secret-2"');
    };
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 10, maxInFlight: 1, isRowError });
    const { errors, restore } = collectedErrors();

    let outcomes: PromiseSettledResult<void>[];
    try {
      const settled = Promise.allSettled([1, 2, 3, 4].map((row) => commits.write(row)));
      await writer.finishAll();
      outcomes = await settled;
    } finally {
      restore();
    }

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    expect(outcomes.slice(1)).toEqual(Array(3).fill({ status: 'rejected', reason: new Error('refused 2,3,4') }));
    // Said once, by the error's kind: not its message, which could quote the rows.
    expect(errors).toEqual([[{ judgement: 'TypeError' }, expect.stringContaining('could not be judged'), 'GroupCommit']]);
    expect(JSON.stringify(errors)).not.toContain('secret-2');
    const later = commits.write(1);
    await writer.finishAll();
    await expect(later).resolves.toBeUndefined();
  });

  it('when a lone row is refused, then its caller gets the error and later rows are still written', async () => {
    const writer = controlledWriter((row) => row === 1);
    const commits = new GroupCommit(writer.writeRows, { maxBatch: 10, maxInFlight: 1, isRowError: () => true });

    const first = expect(commits.write(1)).rejects.toThrow('refused 1');
    await writer.finishAll();
    await first;

    const second = commits.write(2);
    await writer.finishAll();
    await expect(second).resolves.toBeUndefined();
  });

  it('when the write answers each row, then each caller gets its own row’s answer, batched or retried alone', async () => {
    const commits = new GroupCommit<number, string>(
      (rows) => (rows.includes(3) && rows.length > 1 ? Promise.reject(new Error('refused 3')) : Promise.resolve(rows.map((row) => `row ${row}`))),
      { maxBatch: 10, maxInFlight: 1, isRowError: () => true },
    );

    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((row) => commits.write(row)));

    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : 'refused'))).toEqual(['row 1', 'row 2', 'row 3', 'row 4']);
  });
});
