import { AuditTrail } from '../../audit/trail/domain/audit-trail.service';
import { AuditUnavailable, EarlierAttemptUnresolved } from '../../audit/trail/domain/audit.errors';
import type { AuthenticatedClient } from '../../auth/domain/api-client';
import { inRequestScope, RequestRecord } from '../../common/domain/request-record';
import { REFERENCE_ALREADY_SEEN, UpstreamError } from '../../common/domain/upstream';
import { CountingMetrics, FixedClock, InMemoryAuditLog, InMemoryIdempotencyStore, idempotencyService } from '../../../test/support/fakes';
import { nestLogsOfEachTest } from '../../../test/support/nest-logs';
import { ReferenceReused, ReferenceTaken } from './idempotency.errors';
import { ProviderWrites } from './provider-writes.service';

const acme: AuthenticatedClient = { id: 'client-acme', name: 'acme-app', role: 'partner', tenant: 'acme' };
const globex: AuthenticatedClient = { id: 'client-globex', name: 'globex-app', role: 'partner', tenant: 'globex' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const alreadySeen = () => new UpstreamError({ code: REFERENCE_ALREADY_SEEN, message: 'already seen', outcome: 'rejected', upstream: { status: 409 } });

describe(ProviderWrites.name, () => {
  const logs = nestLogsOfEachTest();
  let log: InMemoryAuditLog;
  let clock: FixedClock;
  let sut: ProviderWrites;
  let trail: AuditTrail;
  let store: InMemoryIdempotencyStore;
  let request = 0;
  /**
   * One request, ended as the edge ends it: its terminal event written (with its write's result or
   * release), `succeeded` for an answer, `unknown` for a failure after its attempt.
   */
  const inRequest = async <T>(work: (record: RequestRecord) => Promise<T>): Promise<T> => {
    const record = new RequestRecord(`request-${++request}`);
    let answer: T;
    try {
      answer = await inRequestScope(record, () => work(record));
    } catch (error) {
      // While the log is down the edge's terminal event fails as well (and is logged): not this spec's subject.
      if (!log.failing) await trail.conclude(record, { operation: 'customer.create', phase: 'unknown', httpStatus: 504 });
      throw error;
    }
    await trail.conclude(record, { operation: 'customer.create', phase: 'succeeded', httpStatus: 201 });
    return answer;
  };

  beforeEach(() => {
    log = new InMemoryAuditLog();
    clock = new FixedClock(new Date('2026-11-23T10:00:00Z'));
    const metrics = new CountingMetrics();
    trail = new AuditTrail(log, clock, metrics);
    store = new InMemoryIdempotencyStore(log);
    sut = new ProviderWrites(idempotencyService(store, clock, metrics).service, trail);
  });

  describe('begin', () => {
    it('when the partner sent no reference, then a new UUID is the reference, and the request’s record names it at once', async () => {
      const noted = await inRequest(async (record) => {
        const write = sut.begin('bank_account.create', { customerId: 'cust-1', currency: 'EUR' });
        return { reference: write.reference, record: record };
      });

      expect(noted.reference).toMatch(UUID);
      expect(noted.record).toMatchObject({ reference: noted.reference, customerId: 'cust-1', currency: 'EUR' });
    });

    it('when the partner sent a reference, then it is the reference', async () => {
      await expect(inRequest(() => Promise.resolve(sut.begin('customer.create', { reference: 'ref-given' }).reference))).resolves.toBe('ref-given');
    });
  });

  describe('once', () => {
    it('when made, then the attempted event is committed before the call, with the operation and the subject', async () => {
      const phasesAtCall: string[][] = [];

      const made = await inRequest(() =>
        sut.begin('bank_account.create', { reference: 'ref-1', customerId: 'cust-1', currency: 'GBP' }).once(acme, { a: 1, reference: 'ref-1' }, () => {
          phasesAtCall.push(log.events.map((event) => event.phase));
          return Promise.resolve('account-1');
        }),
      );

      expect(made).toEqual({ value: 'account-1', replayed: false });
      expect(phasesAtCall).toEqual([['attempted']]);
      expect(log.events[0]).toMatchObject({ operation: 'bank_account.create', phase: 'attempted', reference: 'ref-1', customerId: 'cust-1', currency: 'GBP' });
    });

    it('when the same body comes again with the reference, then the first result is replayed and nothing is called or attempted again', async () => {
      let calls = 0;
      const write = () => sut.begin('customer.create', { reference: 'ref-2' }).once(acme, { name: 'Ada', reference: 'ref-2' }, () => Promise.resolve(++calls));

      await inRequest(write);
      const again = await inRequest(write);

      expect(again).toEqual({ value: 1, replayed: true });
      expect(calls).toBe(1);
      expect(log.events.filter((event) => event.phase === 'attempted')).toHaveLength(1);
    });

    it('when the reference comes again with another body, or from another client, then it is refused and nothing is called', async () => {
      let calls = 0;
      const call = () => Promise.resolve(++calls);
      await inRequest(() => sut.begin('customer.create', { reference: 'ref-3' }).once(acme, { name: 'Ada', reference: 'ref-3' }, call));

      const otherBody = inRequest(() => sut.begin('customer.create', { reference: 'ref-3' }).once(acme, { name: 'Grace', reference: 'ref-3' }, call));
      const otherClient = inRequest(() => sut.begin('customer.create', { reference: 'ref-3' }).once(globex, { name: 'Ada', reference: 'ref-3' }, call));

      await expect(otherBody).rejects.toBeInstanceOf(ReferenceReused);
      await expect(otherClient).rejects.toBeInstanceOf(ReferenceTaken);
      expect(calls).toBe(1);
    });

    it('when the audit log cannot be written, then AuditUnavailable and the provider is not called', async () => {
      log.failing = true;
      let calls = 0;

      const write = inRequest(() => sut.begin('customer.create', { reference: 'ref-4' }).once(acme, { reference: 'ref-4' }, () => Promise.resolve(++calls)));

      await expect(write).rejects.toBeInstanceOf(AuditUnavailable);
      expect(calls).toBe(0);
      expect(logs.lines.map((line) => [line.level, line.context, line.message])).toEqual([['error', 'AuditTrail', 'Audit event could not be written']]);
    });

    it('when the provider has seen the reference and an earlier attempt never learned its outcome, then EarlierAttemptUnresolved, and the retry may come again', async () => {
      const crashed = inRequest(() =>
        sut.begin('customer.create', { reference: 'ref-5' }).once(acme, { reference: 'ref-5' }, () => Promise.reject(new Error('connection lost'))),
      );
      await expect(crashed).rejects.toThrow('connection lost');
      // The attempt wrote its `attempted` and never its terminal event: its outcome is unknown.
      clock.current = new Date(clock.current.getTime() + 60_000);

      const retry = inRequest(() =>
        sut.begin('customer.create', { reference: 'ref-5' }).once(acme, { reference: 'ref-5' }, () => Promise.reject(alreadySeen())),
      );

      await expect(retry).rejects.toBeInstanceOf(EarlierAttemptUnresolved);
    });

    it('when the result needs another write to stand, then it is written with the result, at the request’s end, and never for a replay or a failure', async () => {
      const settled: string[] = [];
      const write = (reference: string, call: () => Promise<{ id: string }>) =>
        inRequest(() =>
          sut.begin('customer.create', { reference }).once(acme, { reference }, call, {
            settle: async (made) => {
              settled.push(made.id);
            },
          }),
        );

      await write('ref-7', () => Promise.resolve({ id: 'cust-7' }));
      await write('ref-7', () => Promise.resolve({ id: 'cust-other' }));
      await write('ref-8', () => Promise.reject(new Error('provider refused'))).catch(() => undefined);

      expect(settled).toEqual(['cust-7']);
      expect(store.rows.get('ref-7')).toMatchObject({ state: 'completed', result: { id: 'cust-7' } });
    });

    it('when the result names what it is about, then the record names it after the write, on a replay too', async () => {
      const write = () =>
        inRequest(async (record) => {
          await sut
            .begin('customer.create', { reference: 'ref-6' })
            .once(acme, { reference: 'ref-6' }, () => Promise.resolve({ id: 'cust-9' }), { about: (made) => ({ customerId: made.id }) });
          return record;
        });

      expect(await write()).toMatchObject({ reference: 'ref-6', customerId: 'cust-9' });
      expect(await write()).toMatchObject({ reference: 'ref-6', customerId: 'cust-9' });
    });
  });
});
