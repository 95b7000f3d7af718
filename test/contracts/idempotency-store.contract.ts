import { createHash, randomUUID } from 'node:crypto';
import type { AuditEvent } from '../../src/audit/trail/domain/audit-event';
import type { AuditLog } from '../../src/audit/trail/domain/audit-log.port';
import type { IdempotencyKey } from '../../src/idempotency/domain/idempotency';
import type { ClaimRequest, IdempotencyStore } from '../../src/idempotency/domain/idempotency-store.port';

/**
 * What every IdempotencyStore must do, one request at a time: the fake and the PostgreSQL adapter
 * alike (see audit-log.contract.ts). `log` is the audit log its claims append their write-ahead
 * events to.
 */
export function idempotencyStoreContract(subject: () => IdempotencyStore, log: () => AuditLog): void {
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
    expect(await subject().claim(claimOf(key))).toEqual({ kind: 'in_flight', since: now });
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
    await subject().complete({ key, claimedAt: now }, { id: 'acct-1', iban: 'DE00' });

    expect(await subject().claim(claimOf(key))).toEqual({ kind: 'completed', result: { id: 'acct-1', iban: 'DE00' } });
  });

  it('when the attempt was released, then the same body may claim it again, and another body is still a mismatch', async () => {
    const key = newKey();
    await subject().claim(claimOf(key));
    await subject().release({ key, claimedAt: now });

    expect(await subject().claim(claimOf(key, 'body-2'))).toEqual({ kind: 'mismatch' });
    expect(await subject().claim(claimOf(key))).toEqual({ kind: 'claimed' });
  });

  describe('a claim with its write-ahead event', () => {
    const attemptedFor = (key: IdempotencyKey, requestId: string, id: string = randomUUID()): AuditEvent => ({
      id,
      occurredAt: new Date(),
      requestId,
      operation: 'bank_account.create',
      phase: 'attempted',
      clientId: key.clientId,
      clientName: 'contract',
      tenant: 'contract',
      reference: key.reference,
    });
    /** The attempts the log holds for a reference (none has a terminal event here), by request. */
    const attemptsOf = async (key: IdempotencyKey) =>
      (await log().unresolved({ reference: key.reference, attemptedBefore: new Date(Date.now() + 3600_000), limit: 10 })).calls.map((call) => call.requestId);

    it('when the reference is claimed, then its event is in the log; when it is not, then the event is not', async () => {
      const key = newKey();

      expect(await subject().claim(claimOf(key), attemptedFor(key, 'r-first'))).toEqual({ kind: 'claimed' });
      expect(await subject().claim(claimOf(key), attemptedFor(key, 'r-duplicate'))).toEqual({ kind: 'in_flight', since: now });
      expect(await subject().claim(claimOf(key, 'body-2'), attemptedFor(key, 'r-reuse'))).toEqual({ kind: 'mismatch' });
      expect(await attemptsOf(key)).toEqual(['r-first']);
    });

    it('when the reference comes in upper case, then it is claimed with its event all the same, and a second claim finds it in flight', async () => {
      const key = { ...newKey(), reference: randomUUID().toUpperCase() };

      expect(await subject().claim(claimOf(key), attemptedFor(key, 'r-upper'))).toEqual({ kind: 'claimed' });
      expect(await subject().claim(claimOf(key), attemptedFor(key, 'r-again'))).toEqual({ kind: 'in_flight', since: now });
      expect(await attemptsOf(key)).toEqual(['r-upper']);
    });

    it('when a released reference is claimed again, then the retry’s event joins the first', async () => {
      const key = newKey();
      await subject().claim(claimOf(key), attemptedFor(key, 'r-first'));
      await subject().release({ key, claimedAt: now });

      expect(await subject().claim(claimOf(key), attemptedFor(key, 'r-retry'))).toEqual({ kind: 'claimed' });
      expect((await attemptsOf(key)).sort()).toEqual(['r-first', 'r-retry']);
    });

    it('when the event cannot be written, then the claim is not kept either: the same body claims it at once', async () => {
      const key = newKey();
      const taken = attemptedFor(key, 'r-earlier');
      await log().append(taken);

      // The log refuses an event id it already holds.
      await expect(subject().claim(claimOf(key), attemptedFor(key, 'r-refused', taken.id))).rejects.toThrow();

      expect(await subject().claim(claimOf(key), attemptedFor(key, 'r-next'))).toEqual({ kind: 'claimed' });
      expect((await attemptsOf(key)).sort()).toEqual(['r-earlier', 'r-next']);
    });

    it('when many claims arrive at once, some of one reference and some of a reference held, then each reference is won once, with its winner’s event alone', async () => {
      const held = newKey();
      await subject().claim(claimOf(held), attemptedFor(held, 'r-held'));
      const keys = [newKey(), newKey(), newKey(), newKey()];
      const claims = [...keys, ...keys, held].map((key, i) => ({ key, requestId: `r-${i}` }));

      const answers = await Promise.all(claims.map(({ key, requestId }) => subject().claim(claimOf(key), attemptedFor(key, requestId))));

      for (const key of [...keys, held]) {
        const won = claims.filter((claim, i) => claim.key === key && answers[i].kind === 'claimed').map((claim) => claim.requestId);
        expect(won).toHaveLength(key === held ? 0 : 1);
        expect(await attemptsOf(key)).toEqual(key === held ? ['r-held'] : won);
      }
    });

    it('when one event of many arriving at once is refused, then only its claim fails, and the others are claimed with their events', async () => {
      const keys = [newKey(), newKey(), newKey()];
      const taken = attemptedFor(keys[1], 'r-earlier');
      await log().append(taken);

      const answers = await Promise.allSettled(
        keys.map((key, i) => subject().claim(claimOf(key), attemptedFor(key, `r-${i}`, i === 1 ? taken.id : undefined))),
      );

      expect(answers.map((answer) => answer.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await attemptsOf(keys[0])).toEqual(['r-0']);
      expect(await attemptsOf(keys[1])).toEqual(['r-earlier']);
      expect(await attemptsOf(keys[2])).toEqual(['r-2']);
      expect(await subject().claim(claimOf(keys[1]), attemptedFor(keys[1], 'r-next'))).toEqual({ kind: 'claimed' });
    });
  });

  describe('an attempt’s end with its terminal event', () => {
    const eventFor = (key: IdempotencyKey, requestId: string, phase: AuditEvent['phase'], id: string = randomUUID()): AuditEvent => ({
      id,
      occurredAt: new Date(),
      requestId,
      operation: 'bank_account.create',
      phase,
      clientId: key.clientId,
      clientName: 'contract',
      tenant: 'contract',
      reference: key.reference,
    });
    /** The attempts the log holds for a reference whose own request has not ended, by request. */
    const unresolvedOf = async (key: IdempotencyKey) =>
      (await log().unresolved({ reference: key.reference, attemptedBefore: new Date(Date.now() + 3600_000), limit: 10 })).calls.map((call) => call.requestId);

    it('when the result is stored with its terminal event, then both are there: a retry gets the result, and the attempt has ended', async () => {
      const key = newKey();
      await subject().claim(claimOf(key), eventFor(key, 'r-1', 'attempted'));

      await subject().complete({ key, claimedAt: now }, { id: 'acct-1' }, eventFor(key, 'r-1', 'succeeded'));

      expect(await subject().claim(claimOf(key), eventFor(key, 'r-2', 'attempted'))).toEqual({ kind: 'completed', result: { id: 'acct-1' } });
      expect(await unresolvedOf(key)).toEqual([]);
    });

    it('when the claim is released with its terminal event, then both are there: the same body claims it at once, and the attempt has ended', async () => {
      const key = newKey();
      await subject().claim(claimOf(key), eventFor(key, 'r-1', 'attempted'));

      await subject().release({ key, claimedAt: now }, eventFor(key, 'r-1', 'failed'));

      expect(await unresolvedOf(key)).toEqual([]);
      expect(await subject().claim(claimOf(key), eventFor(key, 'r-2', 'attempted'))).toEqual({ kind: 'claimed' });
    });

    it('when the terminal event is refused, then the result is not stored either: both or neither', async () => {
      const key = newKey();
      await subject().claim(claimOf(key), eventFor(key, 'r-1', 'attempted'));
      const taken = eventFor(key, 'r-other', 'failed');
      await log().append(taken);

      await expect(subject().complete({ key, claimedAt: now }, { id: 'acct-1' }, eventFor(key, 'r-1', 'succeeded', taken.id))).rejects.toThrow();

      expect(await subject().claim(claimOf(key), eventFor(key, 'r-2', 'attempted'))).toEqual({ kind: 'in_flight', since: now });
    });

    it('when an earlier claim of the reference is released, then a later claim of it stays (only its own claim is released)', async () => {
      const key = newKey();
      const earlier = new Date(now.getTime() - 120_000);
      await subject().claim({ ...claimOf(key), now: earlier, lockedUntil: new Date(earlier.getTime() + 1000) });
      // Abandoned (its lease over), and taken over by a retry with the same body.
      expect(await subject().claim(claimOf(key))).toEqual({ kind: 'claimed' });

      await subject().release({ key, claimedAt: earlier });

      expect(await subject().claim(claimOf(key))).toEqual({ kind: 'in_flight', since: now });
    });

    it('when a stored result is released by a late attempt, then the result stays', async () => {
      const key = newKey();
      await subject().claim(claimOf(key));
      await subject().complete({ key, claimedAt: now }, 'the result');

      await subject().release({ key, claimedAt: now });

      expect(await subject().claim(claimOf(key))).toEqual({ kind: 'completed', result: 'the result' });
    });
  });
}
