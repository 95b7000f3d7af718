import { BALANCE_OPERATIONS, BALANCE_SCOPES } from '../balances/domain/balances.service';
import { BANK_ACCOUNT_OPERATIONS, BANK_ACCOUNT_SCOPES } from '../bank-accounts/domain/bank-accounts.service';
import { CUSTOMER_OPERATIONS, CUSTOMER_SCOPES } from '../customers/domain/customers.service';
import { EVENT_OPERATIONS } from '../events/domain/events.service';
import { WEBHOOK_OPERATIONS } from '../webhooks/domain/webhook-endpoints.service';

/**
 * The partner API's operations and scopes, each written once by its slice (its service): listed
 * here for what names them all (the audit log's filters and documents, the scopes the OpenID
 * providers are asked for). A new slice adds its two lists here.
 */
export const PARTNER_OPERATIONS: readonly string[] = [
  ...Object.values(CUSTOMER_OPERATIONS),
  ...Object.values(BALANCE_OPERATIONS),
  ...Object.values(BANK_ACCOUNT_OPERATIONS),
  ...Object.values(EVENT_OPERATIONS),
  ...Object.values(WEBHOOK_OPERATIONS),
];

export const PARTNER_SCOPES: readonly string[] = [...Object.values(CUSTOMER_SCOPES), ...Object.values(BALANCE_SCOPES), ...Object.values(BANK_ACCOUNT_SCOPES)];
