import { AuditTrail } from '../../../audit/trail/domain/audit-trail.service';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { inRequestScope, RequestRecord } from '../../../common/domain/request-record';
import { CustomerTenancy } from '../../customers/domain/customer-tenancy.service';
import { CustomerNotFound } from '../../customers/domain/customers.errors';
import { ProviderWrites } from '../../../idempotency/domain/provider-writes.service';
import {
  CountingMetrics,
  FixedClock,
  InMemoryAuditLog,
  InMemoryCustomerOwnership,
  InMemoryIdempotencyStore,
  idempotencyService,
  RecordingBankAccountRecords,
} from '../../../../test/support/fakes';
import { buildOpenBankAccount } from '../../../../test/support/builders';
import { BankAccount, BankAccountGateway, OpenBankAccount } from './bank-account.gateway.port';
import { BankAccountsService } from './bank-accounts.service';

class RecordingBankAccountGateway extends BankAccountGateway {
  readonly opened: { request: OpenBankAccount; phasesBefore: string[] }[] = [];
  /** The customer id the provider's answer names, when it is not the one asked for. */
  answeredCustomer?: string;
  constructor(private readonly log: InMemoryAuditLog) {
    super();
  }

  open(request: OpenBankAccount): Promise<BankAccount> {
    this.opened.push({ request, phasesBefore: this.log.events.map((event) => event.phase) });
    return Promise.resolve({
      id: 'acc-1',
      customerId: this.answeredCustomer ?? request.customerId,
      currency: request.currency,
      reference: request.reference,
      status: 'active',
      iban: 'DE89370400440532013000',
    });
  }
}

const ACME_CUSTOMER = '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44';
const acme: AuthenticatedClient = { id: 'client-acme', name: 'acme-app', role: 'partner', tenant: 'acme' };
const globex: AuthenticatedClient = { id: 'client-globex', name: 'globex-app', role: 'partner', tenant: 'globex' };

describe(BankAccountsService.name, () => {
  let log: InMemoryAuditLog;
  let store: InMemoryIdempotencyStore;
  let gateway: RecordingBankAccountGateway;
  let sut: BankAccountsService;
  let trail: AuditTrail;
  let records: RecordingBankAccountRecords;
  const record = () => new RequestRecord('request-1');

  beforeEach(async () => {
    log = new InMemoryAuditLog();
    store = new InMemoryIdempotencyStore(log);
    gateway = new RecordingBankAccountGateway(log);
    const ownership = new InMemoryCustomerOwnership();
    await ownership.assign(ACME_CUSTOMER, 'acme', 'created');
    const clock = new FixedClock();
    const metrics = new CountingMetrics();
    trail = new AuditTrail(log, clock, metrics);
    records = new RecordingBankAccountRecords();
    sut = new BankAccountsService(
      gateway,
      new CustomerTenancy(ownership),
      new ProviderWrites(idempotencyService(store, clock, metrics).service, trail),
      records,
      trail,
    );
  });

  describe('open', () => {
    it('when the customer is the caller’s tenant’s, then attempted is committed first, naming the reference, customer and currency', async () => {
      const { reference: _none, ...request } = buildOpenBankAccount({ customerId: ACME_CUSTOMER, currency: 'GBP' });

      const opened = await inRequestScope(record(), () => sut.open(acme, request));

      expect(gateway.opened).toHaveLength(1);
      expect(gateway.opened[0].phasesBefore).toEqual(['attempted']);
      expect(log.events[0]).toMatchObject({
        operation: 'bank_account.create',
        phase: 'attempted',
        customerId: ACME_CUSTOMER,
        currency: 'GBP',
        reference: opened.value.reference,
      });
      expect(gateway.opened[0].request.reference).toBe(opened.value.reference);
    });

    it('when the provider’s answer names another customer, then the account is recorded under the one it was opened for, in the caller’s tenant', async () => {
      gateway.answeredCustomer = '0b5a3f5e-3f0c-4c55-9a2c-7f1d2b9a7c11';
      const request = buildOpenBankAccount({ customerId: ACME_CUSTOMER });
      const first = record();
      await inRequestScope(first, () => sut.open(acme, request));
      // As the edge ends the request: its terminal event, with the account's record before the stored answer.
      await trail.conclude(first, { operation: 'bank_account.create', phase: 'succeeded', httpStatus: 201 });

      expect(records.recorded).toEqual([
        { account: expect.objectContaining({ id: 'acc-1', customerId: ACME_CUSTOMER, iban: 'DE89370400440532013000' }), tenant: 'acme', origin: 'opened' },
      ]);
    });

    it('when the customer is another tenant’s, then CustomerNotFound before any claim, event or provider call', async () => {
      await expect(inRequestScope(record(), () => sut.open(globex, buildOpenBankAccount({ customerId: ACME_CUSTOMER })))).rejects.toBeInstanceOf(
        CustomerNotFound,
      );

      expect(store.rows.size).toBe(0);
      expect(log.events).toEqual([]);
      expect(gateway.opened).toEqual([]);
    });

    it('when the same request is sent again with its reference, then the stored account is replayed and the provider is not called again', async () => {
      const request = buildOpenBankAccount({ customerId: ACME_CUSTOMER });
      const first = record();
      await inRequestScope(first, () => sut.open(acme, request));
      // As the edge ends the request: its terminal event, with the stored account.
      await trail.conclude(first, { operation: 'bank_account.create', phase: 'succeeded', httpStatus: 201 });

      const again = await inRequestScope(record(), () => sut.open(acme, request));

      expect(again.replayed).toBe(true);
      expect(gateway.opened).toHaveLength(1);
    });
  });
});
