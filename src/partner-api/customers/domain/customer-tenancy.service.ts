import { Injectable } from '@nestjs/common';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CustomerOwnership } from './customer-ownership.port';
import { CustomerNotFound } from './customers.errors';

/**
 * Answers "may this caller act on this customer?" before anything is sent to the provider: a
 * partner server, on any customer of its tenant; an end user, only on the customers that are
 * theirs. Anyone else's customer is not found (its existence is not revealed).
 */
@Injectable()
export class CustomerTenancy {
  constructor(private readonly ownership: CustomerOwnership) {}

  /** @throws CustomerNotFound when the customer is not the caller's (or not known at all). */
  async assertVisibleTo(caller: Pick<AuthenticatedClient, 'id' | 'tenant' | 'role'>, customerId: string): Promise<void> {
    const endUser = caller.role === 'end_user';
    let owner = await this.ownership.ownerOf(customerId);
    // Remembered as nobody's yet: it may have been bound to this end user on another replica since.
    if (endUser && owner?.endUser === undefined && owner?.tenant === caller.tenant) owner = await this.ownership.ownerOf(customerId, { fresh: true });
    if (owner === undefined || owner.tenant !== caller.tenant) throw new CustomerNotFound();
    if (endUser && owner.endUser !== caller.id) throw new CustomerNotFound();
  }
}
