import { createHash, randomUUID } from 'node:crypto';
import type { IdempotencyKey } from '../../src/idempotency/domain/idempotency';
import type { ClaimRequest, IdempotencyStore } from '../../src/idempotency/domain/idempotency-store.port';

/** What every IdempotencyStore must do, one request at a time: the fake and the PostgreSQL adapter alike (see audit-log.contract.ts). */
export function idempotencyStoreContract(subject: () => IdempotencyStore): void {
  const now = new Date();
  /** A request's fingerprint as the service makes one: the SHA-256 of its body, in hex. */
  const fingerprintOf = (body: string) => createHash('sha256').update(body).digest('hex');
  const claimOf = (key: IdempotencyKey, body = 'body-1'): ClaimRequest => ({
    key,
    operation: 'bank_account.create',
    fingerprint: fingerprintOf(body),
    now,
    lockedUntil: new Date(now.getTime() + 60_000),
    expiresAt: new Date(now.getTime() + 24 * 3600_000),
  });
  const newKey = (): IdempotencyKey => ({ clientId: randomUUID(), reference: randomUUID() });

  it('when a reference is new, then it is claimed; while in flight, the same body finds it in flight and another body a mismatch', async () => {
    const key = newKey();

    expect(await subject().claim(claimOf(key))).toEqual({ kind: 'claimed' });
    expect(await subject().claim(claimOf(key))).toEqual({ kind: 'in_flight' });
    expect(await subject().claim(claimOf(key, 'body-2'))).toEqual({ kind: 'mismatch' });
  });

  it('when another client uses a claimed reference, then it is taken', async () => {
    const key = newKey();
    await subject().claim(claimOf(key));

    expect(await subject().claim(claimOf({ clientId: randomUUID(), reference: key.reference }))).toEqual({ kind: 'taken' });
  });

  it('when the attempt completed, then the same body gets the stored result back', async () => {
    const key = newKey();
    await subject().claim(claimOf(key));
    await subject().complete(key, { id: 'acct-1', iban: 'DE00' });

    expect(await subject().claim(claimOf(key))).toEqual({ kind: 'completed', result: { id: 'acct-1', iban: 'DE00' } });
  });

  it('when the attempt was released, then the same body may claim it again, and another body is still a mismatch', async () => {
    const key = newKey();
    await subject().claim(claimOf(key));
    await subject().release(key);

    expect(await subject().claim(claimOf(key, 'body-2'))).toEqual({ kind: 'mismatch' });
    expect(await subject().claim(claimOf(key))).toEqual({ kind: 'claimed' });
  });
}
