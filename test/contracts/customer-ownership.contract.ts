import { randomUUID } from 'node:crypto';
import type { CustomerOwnership } from '../../src/customers/domain/customer-ownership.port';

/** What every CustomerOwnership must do: the fake and the PostgreSQL adapter alike (see audit-log.contract.ts). */
export function customerOwnershipContract(subject: () => CustomerOwnership): void {
  it('when a customer was never assigned, then no tenant has it', async () => {
    expect(await subject().tenantOf(randomUUID())).toBeUndefined();
  });

  it('when a customer is assigned, then it belongs to that tenant, and assigning it again to the same tenant changes nothing', async () => {
    const customerId = randomUUID();

    expect(await subject().assign(customerId, 'acme', 'created')).toBe('acme');
    expect(await subject().assign(customerId, 'acme', 'linked')).toBe('acme');
    expect(await subject().tenantOf(customerId)).toBe('acme');
  });

  it('when another tenant claims a customer already assigned, then the first tenant keeps it and the answer says so', async () => {
    const customerId = randomUUID();
    await subject().assign(customerId, 'acme', 'created');

    expect(await subject().assign(customerId, 'globex', 'linked')).toBe('acme');
    expect(await subject().tenantOf(customerId)).toBe('acme');
  });
}
