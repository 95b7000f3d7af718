import type { CommittedEvent } from './audit-log.port';

/**
 * Receipts of audited writes (docs/security.md, "Receipts"): signed by the sealed log, which holds
 * the audit key. The trail asks for one once a write's terminal event is committed.
 */
export abstract class ReceiptIssuer {
  /** The receipt of an event as its statement answered it: nothing read again. */
  abstract receiptFor(committed: CommittedEvent): Promise<string>;

  /** The receipt of a committed event, read from the log; undefined when the log does not hold it. */
  abstract receiptOf(eventId: string): Promise<string | undefined>;

  /**
   * What an idempotent replay answers with: the receipt of the success it repeats (`tenant`'s, of
   * `operation` with `reference`); undefined when there is none.
   */
  abstract originalReceipt(tenant: string, reference: string, operation: string): Promise<string | undefined>;
}
