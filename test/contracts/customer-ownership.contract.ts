import { randomUUID } from 'node:crypto';
import type { CustomerOwnership } from '../../src/partner-api/customers/domain/customer-ownership.port';

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

/** The end-user half of the contract (docs/security.md, "End users"). */
export function customerOwnershipEndUserContract(subject: () => CustomerOwnership): void {
  const alice = randomUUID();
  const bob = randomUUID();

  it('when an end user creates a customer, then it is theirs within the tenant, and listed as theirs only', async () => {
    const customerId = randomUUID();
    await subject().assign(customerId, 'acme', 'created', alice);

    expect(await subject().ownerOf(customerId)).toEqual({ tenant: 'acme', endUser: alice });
    expect(await subject().customersOf('acme', alice)).toContain(customerId);
    expect(await subject().customersOf('acme', bob)).not.toContain(customerId);
    expect(await subject().customersOf('globex', alice)).not.toContain(customerId);
  });

  it('when a partner binds its customer to an end user, then it is theirs, binding again is unchanged, and another end user cannot take it', async () => {
    const customerId = randomUUID();
    await subject().assign(customerId, 'acme', 'created');
    expect(await subject().ownerOf(customerId)).toEqual({ tenant: 'acme' });

    expect(await subject().bind(customerId, 'acme', alice)).toBe('bound');
    expect(await subject().bind(customerId, 'acme', alice)).toBe('unchanged');
    expect(await subject().bind(customerId, 'acme', bob)).toBe('taken');
    expect(await subject().ownerOf(customerId, { fresh: true })).toEqual({ tenant: 'acme', endUser: alice });
  });

  it('when a tenant binds another tenant’s customer, or one no tenant has, then it is not found and nothing changes', async () => {
    const customerId = randomUUID();
    await subject().assign(customerId, 'acme', 'created');

    await expect(subject().bind(customerId, 'globex', alice)).rejects.toMatchObject({ code: 'CUSTOMER.NOT_FOUND' });
    await expect(subject().bind(randomUUID(), 'acme', alice)).rejects.toMatchObject({ code: 'CUSTOMER.NOT_FOUND' });
    expect(await subject().ownerOf(customerId)).toEqual({ tenant: 'acme' });
  });
}
