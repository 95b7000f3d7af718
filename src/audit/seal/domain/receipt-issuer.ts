import { Injectable } from '@nestjs/common';
import { ReceiptIssuer } from '../../trail/domain/receipt-issuer.port';
import { AuditSealStore, CheckpointSigner } from './audit-seal.port';
import { receiptClaimsOf } from './receipt';
import type { CommittedEvent } from '../../trail/domain/audit-log.port';

/** Receipts signed with the audit key, over the event as the log holds it (its stored time, its hash as sealed). */
@Injectable()
export class SignedReceipts extends ReceiptIssuer {
  constructor(
    private readonly store: AuditSealStore,
    private readonly signer: CheckpointSigner,
  ) {
    super();
  }

  receiptFor(committed: CommittedEvent): Promise<string> {
    return this.signer.signReceipt(receiptClaimsOf(committed));
  }

  async receiptOf(eventId: string): Promise<string | undefined> {
    return this.signed(await this.store.receiptFacts(eventId));
  }

  async originalReceipt(tenant: string, reference: string, operation: string): Promise<string | undefined> {
    return this.signed(await this.store.originalSuccess(tenant, reference, operation));
  }

  private signed(facts: CommittedEvent | undefined): Promise<string | undefined> {
    return facts ? this.receiptFor(facts) : Promise.resolve(undefined);
  }
}
