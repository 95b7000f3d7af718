import { AuditLog } from '../../src/audit/trail/domain/audit-log.port';
import { CustomerOwnership } from '../../src/partner-api/customers/domain/customer-ownership.port';
import { IdempotencyStore } from '../../src/idempotency/domain/idempotency-store.port';
import { ProofReplay } from '../../src/auth/domain/proof-replay.port';
import { proofReplayContract } from '../contracts/proof-replay.contract';
import { auditLogContract } from '../contracts/audit-log.contract';
import { customerOwnershipContract, customerOwnershipEndUserContract } from '../contracts/customer-ownership.contract';
import { idempotencyStoreContract } from '../contracts/idempotency-store.contract';
import { startTestApp, TestApp } from '../support/app';

/** The real adapters, on PostgreSQL with the real migrations, held to the contracts the fakes keep (test/contracts/fakes.spec.ts). */
describe('The PostgreSQL adapters keep their ports’ contracts', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  describe('AuditLog (TypeORM repository)', () => {
    auditLogContract(() => t.app.get(AuditLog));
  });

  describe('CustomerOwnership', () => {
    customerOwnershipContract(() => t.app.get(CustomerOwnership));
    customerOwnershipEndUserContract(() => t.app.get(CustomerOwnership));
  });

  describe('IdempotencyStore', () => {
    idempotencyStoreContract(
      () => t.app.get(IdempotencyStore),
      () => t.app.get(AuditLog),
    );
  });

  describe('ProofReplay (DPoP proofs, group-committed)', () => {
    proofReplayContract(() => t.app.get(ProofReplay));
  });
});
