import type { CommittedEvent } from '../../trail/domain/audit-log.port';

/**
 * A receipt (docs/security.md, "Receipts"): a compact JWS, signed with the audit key, that the
 * gateway recorded the outcome it answered a write with. Its payload names the terminal event and
 * its hash as the seal computes it, so a later inclusion proof (`GET /api/v1/receipts/{event_id}`)
 * ties the receipt to a signed checkpoint.
 */

/** The JWS header's `typ` (RFC 7515 4.1.9): what kind of object the signature is over. */
export const RECEIPT_TYPE = 'audit-receipt+jws';

/** Bumped whenever the payload's fields change. */
export const RECEIPT_VERSION = 1;

/** The signed payload, its fields in a fixed order: the same facts always make the same bytes, so a replay's receipt equals the original's. */
export interface ReceiptClaims {
  readonly v: typeof RECEIPT_VERSION;
  readonly event_id: string;
  readonly event_hash: string;
  readonly occurred_at: string;
  readonly request_id: string;
  readonly operation: string;
  readonly outcome: string;
  readonly http_status: number | null;
  readonly reference: string | null;
  readonly customer_id: string | null;
}

export function receiptClaimsOf(facts: CommittedEvent): ReceiptClaims {
  return {
    v: RECEIPT_VERSION,
    event_id: facts.eventId,
    event_hash: facts.eventHash.toString('hex'),
    occurred_at: facts.occurredAt,
    request_id: facts.requestId,
    operation: facts.operation,
    outcome: facts.outcome,
    http_status: facts.httpStatus,
    reference: facts.reference,
    customer_id: facts.customerId,
  };
}
