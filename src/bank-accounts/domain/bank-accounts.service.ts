import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AuditTrail } from '../../audit/domain/audit-trail.service';
import type { AuthenticatedClient } from '../../auth/domain/api-client';
import { CustomerTenancy } from '../../customers/domain/customer-tenancy.service';
import { fingerprintOf } from '../../idempotency/domain/idempotency';
import { Idempotent, IdempotencyService } from '../../idempotency/domain/idempotency.service';
import { BankAccount, BankAccountGateway, OpenBankAccount } from './bank-account.gateway.port';

export type BankAccountRequest = Omit<OpenBankAccount, 'reference'> & { readonly reference?: string };

@Injectable()
export class BankAccountsService {
  constructor(
    private readonly gateway: BankAccountGateway,
    private readonly customers: CustomerTenancy,
    private readonly idempotency: IdempotencyService,
    private readonly audit: AuditTrail,
  ) {}

  /**
   * Opens an EUR or GBP account for one of the caller's tenant's customers, once per reference.
   * The request has passed the DTO rules (the expiry rule among them) before it gets here.
   */
  async open(caller: AuthenticatedClient, request: BankAccountRequest): Promise<Idempotent<BankAccount>> {
    const reference = request.reference ?? randomUUID();
    const subject = { reference, customerId: request.customerId, currency: request.currency };
    this.audit.about(subject);
    await this.customers.assertVisibleTo(caller.tenant, request.customerId);
    const command: OpenBankAccount = { ...request, reference };
    return this.idempotency.run(
      { clientId: caller.id, reference },
      'bank_account.create',
      fingerprintOf('bank_account.create', { ...command }),
      () => this.audit.attempted('bank_account.create', subject, () => this.gateway.open(command)),
    );
  }
}
