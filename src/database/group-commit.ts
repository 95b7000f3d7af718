import { Logger } from '@nestjs/common';

interface Waiting<T, R> {
  row: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for single-row writes that callers must await: rows that arrive while earlier ones
 * are being written wait and go together, as one statement in one transaction. Under no load a row
 * is written at once, alone; under load, many requests share one round trip and one commit
 * instead of each paying for its own. Every caller still learns when its own row is committed.
 *
 * While a batch is in flight, a row does not take a free slot alone the moment it arrives: the next
 * batch starts once the event loop has run everything its current turn brought (setImmediate), so
 * the requests whose answers arrived together go together. Taking the slot at once sent most of
 * them alone, one statement each (docs/benchmarks.md, "Rows that arrive together, written together").
 *
 * A batch refused because of its data is split in halves and each written again, down to the row
 * that is refused (within a budget: `commit`), so that one bad row (a value the table refuses)
 * fails only its own caller and not the requests it happened to be batched with. Any other
 * failure (the database is down) fails the whole batch at once, and during those retries every row
 * not yet written: retrying smaller parts would only make every caller wait for the same error many
 * times over.
 *
 * A write may answer each row (`R`): `writeRows` then resolves to one result per row, in order.
 * With `keyOf`, no two rows with the same key are ever written at once, in one batch or in two
 * running side by side: a later one waits until the earlier one's batch has ended (a statement that
 * upserts may touch each row once, and two that lock the same rows may deadlock).
 */
export class GroupCommit<T, R = void> {
  private readonly waiting: Waiting<T, R>[] = [];
  private inFlight = 0;
  /** With keyOf: the keys of the rows being written. */
  private readonly writing = new Set<string>();
  /** A start is due once the event loop's current turn has run (setImmediate). */
  private startDue = false;

  constructor(
    private readonly writeRows: (rows: T[]) => Promise<R[] | void>,
    private readonly options: { maxBatch: number; maxInFlight: number; isRowError: (error: unknown) => boolean; keyOf?: (row: T) => string },
  ) {}

  /** Resolves once `row` is committed (to its result, when the write gives one); rejects with the write's error when it is not. */
  write(row: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      if (this.inFlight === 0) this.startNext();
      else this.startSoon();
    });
  }

  /** Starts what waits once the rows the event loop's current turn brings have arrived too. */
  private startSoon(): void {
    if (this.startDue) return;
    this.startDue = true;
    setImmediate(() => {
      this.startDue = false;
      this.startNext();
    });
  }

  private startNext(): void {
    while (this.waiting.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.nextBatch();
      if (batch.length === 0) return; // every waiting row's key is being written: the end of that batch starts the next
      this.inFlight++;
      void this.commit(batch).finally(() => {
        this.inFlight--;
        const { keyOf } = this.options;
        if (keyOf) for (const entry of batch) this.writing.delete(keyOf(entry.row));
        this.startNext();
      });
    }
  }

  private nextBatch(): Waiting<T, R>[] {
    const { keyOf, maxBatch } = this.options;
    if (!keyOf) return this.waiting.splice(0, maxBatch);
    const batch: Waiting<T, R>[] = [];
    for (let i = 0; i < this.waiting.length && batch.length < maxBatch;) {
      const key = keyOf(this.waiting[i].row);
      if (this.writing.has(key)) {
        i++;
      } else {
        this.writing.add(key);
        batch.push(...this.waiting.splice(i, 1));
      }
    }
    return batch;
  }

  /**
   * Writes `batch`; when its data is refused, writes each half in turn, and so on down to the row
   * that is refused: one bad row among n costs at most 1 + 2·⌈log2 n⌉ statements (17 for 200) where
   * writing each row alone cost n + 1 (201). Where many rows are refused, halving alone would cost
   * up to 2n − 1, so each batch has a budget of statements (`Budget`): a part is written whole
   * only while enough is left to write every row still unsettled alone, and alone otherwise. A
   * batch never costs more than 1 + n + 2·⌈log2 n⌉ statements (217 for 200).
   */
  private commit(batch: Waiting<T, R>[]): Promise<void> {
    return this.writePart(batch, { statements: batch.length + 1 + 2 * Math.ceil(Math.log2(batch.length)), unsettled: batch.length });
  }

  /**
   * Whether `error` refused a row's data. A judgement that itself throws counts as no, so the batch
   * fails with the write's own error and no caller waits for ever; it is logged (its kind only: a
   * message could quote the rows), since it is a defect and would otherwise show only as failed writes.
   */
  private refusedForItsData(error: unknown): boolean {
    try {
      return this.options.isRowError(error);
    } catch (judgement) {
      logger.error(
        { judgement: judgement instanceof Error ? judgement.name : typeof judgement },
        'A failed write could not be judged: its rows fail with the write’s error, not split down to the row refused',
      );
      return false;
    }
  }

  private async writeHalves(part: Waiting<T, R>[], budget: Budget): Promise<void> {
    const half = Math.ceil(part.length / 2);
    await this.writePart(part.slice(0, half), budget);
    await this.writePart(part.slice(half), budget);
  }

  /** A batch, or one part of a refused batch: written whole while the budget allows (see `commit`), split again if refused for its data. */
  private async writePart(part: Waiting<T, R>[], budget: Budget): Promise<void> {
    if (budget.failed) {
      // A statement of this batch failed for another reason than its data: the rest would fail the same way.
      for (const entry of part) entry.reject(budget.failed.error);
      budget.unsettled -= part.length;
      return;
    }
    if (part.length > 1 && budget.statements - 1 < budget.unsettled) {
      for (const entry of part) await this.writePart([entry], budget);
      return;
    }
    budget.statements--;
    try {
      const results = await this.writeRows(part.map((entry) => entry.row));
      part.forEach((entry, index) => entry.resolve(results?.[index] as R));
    } catch (error) {
      const refused = this.refusedForItsData(error);
      if (part.length > 1 && refused) return this.writeHalves(part, budget);
      if (!refused) budget.failed = { error };
      for (const entry of part) entry.reject(error);
    }
    budget.unsettled -= part.length;
  }
}

const logger = new Logger('GroupCommit');

/**
 * What a batch may still spend: statements, and the rows not yet settled. A part of several rows
 * is written whole only when, should it be refused, every unsettled row could still be written
 * alone: so the statements never run out. `failed`: a statement failed for another reason than its
 * data (the database is down), and every row not yet written fails with it, without a statement
 * each.
 */
interface Budget {
  statements: number;
  unsettled: number;
  failed?: { error: unknown };
}
