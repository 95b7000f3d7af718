import { InMemoryAuditLog, InMemoryCustomerOwnership, InMemoryIdempotencyStore, InMemoryProofReplay } from '../support/fakes';
import { proofReplayContract } from './proof-replay.contract';
import { auditLogContract } from './audit-log.contract';
import { customerOwnershipContract, customerOwnershipEndUserContract } from './customer-ownership.contract';
import { idempotencyStoreContract } from './idempotency-store.contract';

/** The in-memory fakes the unit specs use, held to the same contracts as the real adapters (test/medium/port-contracts.medium-spec.ts). */
describe('The fakes keep their ports’ contracts', () => {
  describe('InMemoryAuditLog', () => {
    const log = new InMemoryAuditLog();
    auditLogContract(() => log);
  });

  describe('InMemoryCustomerOwnership', () => {
    const ownership = new InMemoryCustomerOwnership();
    customerOwnershipContract(() => ownership);
    customerOwnershipEndUserContract(() => ownership);
  });

  describe('InMemoryIdempotencyStore', () => {
    const log = new InMemoryAuditLog();
    const store = new InMemoryIdempotencyStore(log);
    idempotencyStoreContract(
      () => store,
      () => log,
    );
  });

  describe('InMemoryProofReplay', () => {
    const replay = new InMemoryProofReplay();
    proofReplayContract(() => replay);
  });
});
