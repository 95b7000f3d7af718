import { BALANCE_OPERATIONS } from '../domain/balances.service';
import { Injectable } from '@nestjs/common';
import { Balance, BalanceGateway } from '../domain/balance.gateway.port';
import { UpstreamHttpClient } from '../../../upstream/upstream-http.client';
import { UpstreamResponseMapper } from '../../../upstream/upstream-response.mapper';

@Injectable()
export class ProviderBalanceAdapter extends BalanceGateway {
  constructor(private readonly client: UpstreamHttpClient) {
    super();
  }

  async read(customerId: string, currency?: string): Promise<Balance> {
    const path = `/api/v1/customer/balance/${encodeURIComponent(customerId)}${currency ? `?currency=${encodeURIComponent(currency)}` : ''}`;
    const reply = await this.client.get(BALANCE_OPERATIONS.read, path);
    const fields = new UpstreamResponseMapper(reply, 'GET');
    const available = fields.string('available', 'available_balance', 'balance');
    return {
      customerId: fields.optionalString('customer_id', 'id') ?? customerId,
      currency: fields.string('currency'),
      available,
      current: fields.optionalString('current', 'ledger', 'current_balance') ?? available,
      asOf: fields.optionalString('as_of', 'updated_at') ?? null,
    };
  }
}
