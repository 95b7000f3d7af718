import { BANK_ACCOUNT_OPERATIONS } from '../domain/bank-accounts.service';
import { BANK_ACCOUNT_FIELDS, BankAccount, BankAccountGateway, OpenBankAccount } from '../domain/bank-account.gateway.port';
import { toWire } from '../../../common/domain/field-map';
import { Injectable } from '@nestjs/common';
import { UpstreamHttpClient } from '../../../upstream/upstream-http.client';
import { UpstreamSettings } from '../../../upstream/upstream.settings';
import { UpstreamResponseMapper } from '../../../upstream/upstream-response.mapper';

/** The provider's bank-account body: exactly what is sealed and sent. */
export function bankAccountPayload(request: OpenBankAccount): Record<string, unknown> & { reference: string } {
  return { ...toWire(BANK_ACCOUNT_FIELDS, request), reference: request.reference };
}

/** Opens accounts at the provider's bank-account path (configuration: UPSTREAM_BANK_ACCOUNT_PATH). */
@Injectable()
export class ProviderBankAccountAdapter extends BankAccountGateway {
  private readonly path: string;

  constructor(
    private readonly client: UpstreamHttpClient,
    settings: UpstreamSettings,
  ) {
    super();
    this.path = settings.bankAccountPath;
  }

  async open(request: OpenBankAccount): Promise<BankAccount> {
    const reply = await this.client.post(BANK_ACCOUNT_OPERATIONS.open, this.path, bankAccountPayload(request));
    const fields = new UpstreamResponseMapper(reply, 'POST');
    const iban = fields.optionalString('iban');
    const sortCode = fields.optionalString('sort_code');
    const accountNumber = fields.optionalString('account_number');
    return {
      id: fields.string('id', 'account_id'),
      // The customer it was opened for: an answer naming another is not taken for it (the account is recorded, and kept, under this one).
      customerId: request.customerId,
      currency: request.currency,
      reference: request.reference,
      status: fields.optionalString('status') ?? 'active',
      ...(iban ? { iban } : {}),
      ...(sortCode ? { sortCode } : {}),
      ...(accountNumber ? { accountNumber } : {}),
    };
  }
}
