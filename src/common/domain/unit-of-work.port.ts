declare const TRANSACTION: unique symbol;

/**
 * One database transaction that several stores write in (the stores' ports take it as an optional
 * last argument): what they write in it commits together, or not at all. Opaque outside the
 * database adapters.
 */
export interface Transaction {
  readonly [TRANSACTION]: true;
}

/** Opens transactions for the stores to share (see Transaction). */
export abstract class UnitOfWork {
  /**
   * Runs `work` in a new transaction: committed when it resolves, rolled back when it throws.
   * @throws what `work` threw; DatabaseUnavailable when the database cannot be reached or the commit fails on an outage.
   */
  abstract run<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
}
