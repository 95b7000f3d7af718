import { OPERATION } from '../common/domain/audit-operations';
import { BANK_ACCOUNT_FIELDS, BankAccount, BankAccountGateway, OpenBankAccount } from '../bank-accounts/domain/bank-account.gateway.port';
import { toWire } from '../common/domain/field-map';
import { UpstreamHttpClient } from './upstream-http.client';
import { UpstreamResponseMapper } from './upstream-response.mapper';

/** The provider's bank-account body: exactly what is sealed and sent. */
export function bankAccountPayload(request: OpenBankAccount): Record<string, unknown> & { reference: string } {
  return { ...toWire(BANK_ACCOUNT_FIELDS, request), reference: request.reference };
}

/** Built by UpstreamModule's factory: the path is configuration (UPSTREAM_BANK_ACCOUNT_PATH). */
export class UpstreamBankAccountAdapter extends BankAccountGateway {
  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly path: string,
  ) {
    super();
  }

  async open(request: OpenBankAccount): Promise<BankAccount> {
    const reply = await this.client.post(OPERATION.openBankAccount, this.path, bankAccountPayload(request));
    const fields = new UpstreamResponseMapper(reply, 'POST');
    const iban = fields.optionalString('iban');
    const sortCode = fields.optionalString('sort_code');
    const accountNumber = fields.optionalString('account_number');
    return {
      id: fields.string('id', 'account_id'),
      customerId: fields.optionalString('customer_id') ?? request.customerId,
      currency: request.currency,
      reference: request.reference,
      status: fields.optionalString('status') ?? 'active',
      ...(iban ? { iban } : {}),
      ...(sortCode ? { sortCode } : {}),
      ...(accountNumber ? { accountNumber } : {}),
    };
  }
}
