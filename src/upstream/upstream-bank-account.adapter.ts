import { BankAccount, BankAccountGateway, OpenBankAccount } from '../bank-accounts/domain/bank-account.gateway.port';
import { UpstreamHttpClient } from './upstream-http.client';
import { UpstreamResponseMapper } from './upstream-response.mapper';

/** Built by UpstreamModule's factory: the path is configuration (UPSTREAM_BANK_ACCOUNT_PATH). */
export class UpstreamBankAccountAdapter extends BankAccountGateway {
  constructor(
    private readonly client: UpstreamHttpClient,
    private readonly path: string,
  ) {
    super();
  }

  async open(request: OpenBankAccount): Promise<BankAccount> {
    const reply = await this.client.post('bank_account.create', this.path, {
      customer_id: request.customerId,
      currency: request.currency,
      phone_number: request.phoneNumber,
      reference: request.reference,
      document_type: request.documentType,
      document_number: request.documentNumber,
      issued_country_code: request.issuedCountryCode,
      issued_by: request.issuedBy,
      issued_date: request.issuedDate,
      expiration_date: request.expirationDate,
      country: request.country,
      zip_code: request.zipCode,
      street: request.street,
      ...(request.state !== undefined ? { state: request.state } : {}),
      date_of_birth: request.dateOfBirth,
    });
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
