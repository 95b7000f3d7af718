import { Injectable } from '@nestjs/common';
import { AuditTrail } from '../../../audit/trail/domain/audit-trail.service';
import type { AuthenticatedClient } from '../../../auth/domain/api-client';
import { CustomerTenancy } from '../../customers/domain/customer-tenancy.service';
import { Balance, BalanceGateway } from './balance.gateway.port';

/** What the balances slice's requests are audited as (`audit_events.operation`). */
export const BALANCE_OPERATIONS = { read: 'balance.read' } as const;

/** What an end user's access token must grant to call them. */
export const BALANCE_SCOPES = { read: 'balances:read' } as const;

@Injectable()
export class BalancesService {
  constructor(
    private readonly gateway: BalanceGateway,
    private readonly customers: CustomerTenancy,
    private readonly audit: AuditTrail,
  ) {}

  /** The balance of one of the caller's tenant's customers; CustomerNotFound for anyone else's. */
  async read(caller: AuthenticatedClient, customerId: string): Promise<Balance> {
    this.audit.about({ customerId });
    await this.customers.assertVisibleTo(caller, customerId);
    const balance = await this.gateway.read(customerId);
    this.audit.about({ currency: balance.currency });
    return balance;
  }
}
