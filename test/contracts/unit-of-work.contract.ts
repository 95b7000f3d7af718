import { createHash, randomUUID } from 'node:crypto';
import type { AuditEvent } from '../../src/audit/trail/domain/audit-event';
import type { AuditLog } from '../../src/audit/trail/domain/audit-log.port';
import type { UnitOfWork } from '../../src/common/domain/unit-of-work.port';
import type { IdempotencyKey } from '../../src/idempotency/domain/idempotency';
import type { ClaimRequest, IdempotencyStore } from '../../src/idempotency/domain/idempotency-store.port';

export interface SharedStores {
  readonly unitOfWork: UnitOfWork;
  readonly idempotency: IdempotencyStore;
  readonly audit: AuditLog;
}

/**
 * What the idempotency and audit stores do in a shared transaction (a provider write's two commits:
 * the claim with `attempted`, the result with the terminal event): both commit, or neither. Run
 * against the fakes (test/contracts/fakes.spec.ts) and PostgreSQL (test/medium/port-contracts.medium-spec.ts).
 */
export function unitOfWorkContract(subject: () => SharedStores): void {
  const now = new Date();
  const later = new Date(now.getTime() + 10 * 365 * 24 * 3600 * 1000);
  const claimOf = (key: IdempotencyKey): ClaimRequest => ({
    key,
    operation: 'bank_account.create',
    fingerprint: createHash('sha256').update('body').digest('hex'),
    now,
    lockedUntil: new Date(now.getTime() + 60_000),
    expiresAt: new Date(now.getTime() + 24 * 3600_000),
  });
  const event = (reference: string, phase: AuditEvent['phase'], requestId: string): AuditEvent => ({
    id: randomUUID(),
    occurredAt: new Date(),
    operation: 'bank_account.create',
    phase,
    requestId,
    reference,
    clientId: randomUUID(),
    clientName: 'contract',
    tenant: 'contract',
  });
  const unresolvedRequests = async (reference: string) =>
    (await subject().audit.unresolved({ reference, attemptedBefore: later, limit: 10 })).calls.map((call) => call.requestId);
  const failure = new Error('the work failed after both writes');

  it('when the claim and its attempted event are written in one transaction that commits, then both are there', async () => {
    const { unitOfWork, idempotency, audit } = subject();
    const key = { clientId: randomUUID(), reference: randomUUID() };

    const claim = await unitOfWork.run(async (tx) => {
      const won = await idempotency.claim(claimOf(key), tx);
      await audit.append(event(key.reference, 'attempted', 'r-committed'), tx);
      return won;
    });

    expect(claim).toEqual({ kind: 'claimed' });
    expect(await idempotency.claim(claimOf(key))).toEqual({ kind: 'in_flight' });
    expect(await unresolvedRequests(key.reference)).toEqual(['r-committed']);
  });

  it('when the transaction fails after the claim and its attempted event, then neither is kept: the reference is free at once', async () => {
    const { unitOfWork, idempotency, audit } = subject();
    const key = { clientId: randomUUID(), reference: randomUUID() };

    const written = unitOfWork.run(async (tx) => {
      await idempotency.claim(claimOf(key), tx);
      await audit.append(event(key.reference, 'attempted', 'r-rolled-back'), tx);
      throw failure;
    });

    await expect(written).rejects.toBe(failure);
    expect(await unresolvedRequests(key.reference)).toEqual([]);
    expect(await idempotency.claim(claimOf(key))).toEqual({ kind: 'claimed' });
  });

  it('when the result and the terminal event are written in one transaction, then both commit, or neither does', async () => {
    const { unitOfWork, idempotency, audit } = subject();
    const key = { clientId: randomUUID(), reference: randomUUID() };
    await unitOfWork.run(async (tx) => {
      await idempotency.claim(claimOf(key), tx);
      await audit.append(event(key.reference, 'attempted', 'r-write'), tx);
    });

    const failed = unitOfWork.run(async (tx) => {
      await idempotency.complete(key, { id: 'acct-1' }, tx);
      await audit.append(event(key.reference, 'succeeded', 'r-write'), tx);
      throw failure;
    });
    await expect(failed).rejects.toBe(failure);
    expect(await idempotency.claim(claimOf(key))).toEqual({ kind: 'in_flight' });
    expect(await unresolvedRequests(key.reference)).toEqual(['r-write']);

    await unitOfWork.run(async (tx) => {
      await idempotency.complete(key, { id: 'acct-1' }, tx);
      await audit.append(event(key.reference, 'succeeded', 'r-write'), tx);
    });
    expect(await idempotency.claim(claimOf(key))).toEqual({ kind: 'completed', result: { id: 'acct-1' } });
    expect(await unresolvedRequests(key.reference)).toEqual([]);
  });
}
