import { Logger } from '@nestjs/common';
import { AuditTrail } from '../../../audit/trail/domain/audit-trail.service';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { inRequestScope, RequestRecord } from '../../../common/domain/request-record';
import { ProviderWrites } from '../../../idempotency/domain/provider-writes.service';
import {
  CountingMetrics,
  FixedClock,
  InMemoryAuditLog,
  InMemoryCustomerOwnership,
  InMemoryIdempotencyStore,
  RecordingLogger,
  idempotencyService,
  UnreadCustomerDirectory,
} from '../../../../test/support/fakes';
import { CustomerTenancy } from './customer-tenancy.service';
import { CreatedCustomer, CustomerGateway, NewCustomer } from './customer.gateway.port';
import { CustomerRequest, CustomersService } from './customers.service';

/** Answers with the id it is given, and notes what the audit log held when it was called. */
class ScriptedCustomerGateway extends CustomerGateway {
  readonly calls: { customer: NewCustomer; phasesBefore: string[] }[] = [];
  constructor(
    private readonly customerId: string,
    private readonly log: InMemoryAuditLog,
  ) {
    super();
  }

  create(customer: NewCustomer): Promise<CreatedCustomer> {
    this.calls.push({ customer, phasesBefore: this.log.events.map((event) => event.phase) });
    return Promise.resolve({ customerId: this.customerId, reference: customer.reference });
  }
}

const acme: AuthenticatedClient = { id: 'client-acme', name: 'acme-app', role: 'partner', tenant: 'acme' };
const request: CustomerRequest = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phoneNumber: '+447700900123' };
const CUSTOMER_ID = '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44';

describe(CustomersService.name, () => {
  let log: InMemoryAuditLog;
  let ownership: InMemoryCustomerOwnership;
  let gateway: ScriptedCustomerGateway;
  let logger: RecordingLogger;
  let sut: CustomersService;
  let trail: AuditTrail;
  const record = () => new RequestRecord('request-1');
  /** Creates, and ends the request as the edge does: its terminal event, with which the write's result (and its tenancy) is committed. */
  const createdBy = async (caller: AuthenticatedClient, body: CustomerRequest) => {
    const inRequest = record();
    const created = await inRequestScope(inRequest, () => sut.create(caller, body));
    await trail.conclude(inRequest, { operation: 'customer.create', phase: 'succeeded', httpStatus: 201 });
    return created;
  };

  beforeEach(() => {
    log = new InMemoryAuditLog();
    ownership = new InMemoryCustomerOwnership();
    gateway = new ScriptedCustomerGateway(CUSTOMER_ID, log);
    logger = new RecordingLogger();
    Logger.overrideLogger(logger);
    const clock = new FixedClock();
    const metrics = new CountingMetrics();
    trail = new AuditTrail(log, clock, metrics);
    sut = new CustomersService(
      gateway,
      ownership,
      new ProviderWrites(idempotencyService(new InMemoryIdempotencyStore(log), clock, metrics).service, trail),
      trail,
      new UnreadCustomerDirectory(),
      new CustomerTenancy(ownership),
    );
  });

  afterAll(() => {
    Logger.overrideLogger(false);
  });

  describe('create', () => {
    it('when a customer is created, then its attempted event was committed before the provider call, and it belongs to the caller’s tenant once the request ends', async () => {
      const created = await createdBy(acme, request);

      expect(created.value.customerId).toBe(CUSTOMER_ID);
      expect(gateway.calls).toHaveLength(1);
      expect(gateway.calls[0].phasesBefore).toEqual(['attempted']);
      expect(await ownership.tenantOf(CUSTOMER_ID)).toBe('acme');
    });

    it('when no reference is given, then one is generated and sent to the provider', async () => {
      const created = await inRequestScope(record(), () => sut.create(acme, request));

      expect(created.value.reference).toMatch(/^[0-9a-f-]{36}$/);
      expect(gateway.calls[0].customer.reference).toBe(created.value.reference);
    });

    it('when the provider hands back a customer id another tenant holds, then that tenant keeps it and the mismatch is logged as an error', async () => {
      await ownership.assign(CUSTOMER_ID, 'globex', 'created');

      const created = await createdBy(acme, { ...request, reference: '7d0c1f6e-5a43-4c1e-9b2a-2f6d8e0b9c11' });

      expect(created.value.customerId).toBe(CUSTOMER_ID);
      expect(await ownership.tenantOf(CUSTOMER_ID)).toBe('globex');
      expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.context[0])).toEqual([
        'The provider returned a customer id that belongs to another tenant',
      ]);
    });

    it('when an end user creates a customer, then it belongs to them within their tenant', async () => {
      const endUser: AuthenticatedClient = {
        id: '0c3e8f5a-1b2d-8e4f-9a6b-7c8d9e0f1a2b',
        name: 'end-user',
        role: 'end_user',
        tenant: 'acme',
        scopes: ['customers:write'],
      };
      await createdBy(endUser, request);
      expect(await ownership.ownerOf(CUSTOMER_ID)).toEqual({ tenant: 'acme', endUser: endUser.id });
      expect(await ownership.customersOf('acme', endUser.id)).toEqual([CUSTOMER_ID]);
    });

    it('when the audit log cannot take the attempted event, then nothing is sent to the provider', async () => {
      log.failing = true;

      await expect(inRequestScope(record(), () => sut.create(acme, request))).rejects.toMatchObject({ code: 'AUDIT.UNAVAILABLE' });
      expect(gateway.calls).toEqual([]);
    });
  });
  describe('bind', () => {
    const alice = '0c3e8f5a-1b2d-8e4f-9a6b-7c8d9e0f1a2b';
    const bob = '9d1f2e3a-4b5c-8d6e-8f70-8192a3b4c5d6';

    it('when a partner binds its customer to an end user, then it is theirs; again, unchanged; to another end user, refused with CUSTOMER.ALREADY_BOUND', async () => {
      await ownership.assign(CUSTOMER_ID, 'acme', 'created');

      expect(await inRequestScope(record(), () => sut.bind(acme, CUSTOMER_ID, alice))).toBe('bound');
      expect(await inRequestScope(record(), () => sut.bind(acme, CUSTOMER_ID, alice))).toBe('unchanged');
      await expect(inRequestScope(record(), () => sut.bind(acme, CUSTOMER_ID, bob))).rejects.toMatchObject({ code: 'CUSTOMER.ALREADY_BOUND' });
      expect(await ownership.ownerOf(CUSTOMER_ID)).toEqual({ tenant: 'acme', endUser: alice });
    });

    it('when a partner binds another tenant’s customer, then it is not found', async () => {
      await ownership.assign(CUSTOMER_ID, 'globex', 'created');
      await expect(inRequestScope(record(), () => sut.bind(acme, CUSTOMER_ID, alice))).rejects.toMatchObject({ code: 'CUSTOMER.NOT_FOUND' });
    });
  });
});
