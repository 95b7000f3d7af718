import { AuditTrail } from '../../../audit/trail/domain/audit-trail.service';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { inRequestScope, RequestRecord } from '../../../common/domain/request-record';
import { CustomerTenancy } from '../../customers/domain/customer-tenancy.service';
import { CustomerNotFound } from '../../customers/domain/customers.errors';
import { CountingMetrics, FixedClock, InMemoryAuditLog, InMemoryCustomerOwnership } from '../../../../test/support/fakes';
import { Balance, BalanceGateway } from './balance.gateway.port';
import { BalancesService } from './balances.service';
import type { BankAccountsService } from '../../bank-accounts/domain/bank-accounts.service';

class RecordingBalanceGateway extends BalanceGateway {
  readonly reads: string[] = [];

  read(customerId: string): Promise<Balance> {
    this.reads.push(customerId);
    return Promise.resolve({ customerId, currency: 'EUR', available: '10.00', current: '12.50', asOf: null });
  }
}

const ACME_CUSTOMER = '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44';
const acme: AuthenticatedClient = { id: 'client-acme', name: 'acme-app', role: 'partner', tenant: 'acme' };
const globex: AuthenticatedClient = { id: 'client-globex', name: 'globex-app', role: 'partner', tenant: 'globex' };

describe(BalancesService.name, () => {
  let gateway: RecordingBalanceGateway;
  let sut: BalancesService;

  beforeEach(async () => {
    gateway = new RecordingBalanceGateway();
    const ownership = new InMemoryCustomerOwnership();
    await ownership.assign(ACME_CUSTOMER, 'acme', 'created');
    // The accounts' reads are PostgreSQL's (test/e2e/partner-resources.e2e-spec.ts): a customer's balance never asks them.
    const accounts = { visible: () => Promise.reject(new Error('not read by a customer’s balance')) } as unknown as BankAccountsService;
    sut = new BalancesService(
      gateway,
      new CustomerTenancy(ownership),
      new AuditTrail(new InMemoryAuditLog(), new FixedClock(), new CountingMetrics()),
      accounts,
    );
  });

  describe('read', () => {
    it('when the customer is the caller’s tenant’s, then its balance, and the request names the customer and the currency', async () => {
      const context = new RequestRecord('request-1');

      const balance = await inRequestScope(context, () => sut.read(acme, ACME_CUSTOMER));

      expect(balance).toMatchObject({ customerId: ACME_CUSTOMER, available: '10.00' });
      expect(context).toMatchObject({ customerId: ACME_CUSTOMER, currency: 'EUR' });
    });

    it.each([
      ['another tenant’s customer', ACME_CUSTOMER, globex],
      ['a customer no tenant has', '0b5a3f5e-3f0c-4c55-9a2c-7f1d2b9a7c11', acme],
    ])('when the customer is %s, then CustomerNotFound and nothing is asked of the provider', async (_what, customerId, caller) => {
      await expect(inRequestScope(new RequestRecord('request-2'), () => sut.read(caller, customerId))).rejects.toBeInstanceOf(CustomerNotFound);
      expect(gateway.reads).toEqual([]);
    });
  });
});
