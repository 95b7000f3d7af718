import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_REQUEST_ID } from '../../src/audit/requests/http/request-log.dto';
import type { DemoResources } from '../../src/swagger';

/**
 * In sandbox mode, one customer made at first start for the development partner's tenant, with an
 * EUR account, so that Swagger UI's examples (its balance, its account, another account for it) work as served. It is made the way a
 * partner app makes one — a request to the API with the partner's token, validated, audited and
 * sent to the sandbox — and its id is kept under DATA_DIR beside the embedded database and the
 * sandbox's own state: a fresh DATA_DIR is a fresh demo.
 */
export const DEMO_CUSTOMER_BODY = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
  phone_number: '+447700900123',
  country: 'GB',
} as const;

export function demoCustomerFile(dataDir: string): string {
  return join(dataDir, 'demo-customer.json');
}

export function readDemoCustomer(file: string): DemoResources | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const { customer_id: customerId, bank_account_id: bankAccountId } = JSON.parse(readFileSync(file, 'utf8')) as {
      customer_id?: unknown;
      bank_account_id?: unknown;
    };
    if (typeof customerId !== 'string') return undefined;
    return typeof bankAccountId === 'string' ? { customerId, bankAccountId } : { customerId };
  } catch {
    return undefined;
  }
}

/** The demo customer's account: an EUR account opened through the API with the partner's token, as an app opens one. */
export const DEMO_BANK_ACCOUNT_BODY = {
  currency: 'EUR',
  phone_number: '+4915123456789',
  document_type: 'passport',
  document_number: 'C01X00T47',
  issued_country_code: 'DE',
  issued_by: 'Stadt Berlin',
  issued_date: '2020-01-15',
  country: 'DE',
  zip_code: '10115',
  street: 'Invalidenstrasse 1',
  date_of_birth: '1990-12-10',
} as const;

/**
 * Makes the demo customer through the API (the service at `baseUrl`) with the partner's token, and
 * gives it to the development end user `endUser` (a partner server's binding, audited too) when
 * one is named; resolves to its id.
 */
export async function createDemoCustomer(baseUrl: string, partnerToken: string, file?: string, endUser?: string): Promise<DemoResources> {
  const answer = await fetch(`${baseUrl}/api/v1/customers`, {
    method: 'POST',
    // Its request id is Swagger UI's example of one: the partner's request log shows this request.
    headers: { authorization: `Bearer ${partnerToken}`, 'content-type': 'application/json', 'x-request-id': DEMO_REQUEST_ID },
    body: JSON.stringify(DEMO_CUSTOMER_BODY),
  });
  const body = (await answer.json()) as { data: { customer_id?: string } | null; error: { id: string; code?: string } | null };
  if (answer.status !== 201 || !body.data?.customer_id) {
    throw new Error(`The demo customer could not be made: ${answer.status} ${body.error?.code ?? ''} (error id ${body.error?.id ?? 'none'})`);
  }
  const customerId = body.data.customer_id;
  const bankAccountId = await openDemoBankAccount(baseUrl, partnerToken, customerId);
  if (file) writeFileSync(file, JSON.stringify({ customer_id: customerId, bank_account_id: bankAccountId }) + '\n');
  if (endUser) {
    const bound = await fetch(`${baseUrl}/api/v1/customers/${customerId}/end-user`, {
      method: 'POST',
      headers: { authorization: `Bearer ${partnerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: endUser }),
    });
    if (bound.status !== 200) throw new Error(`The demo customer could not be given to the end user ${endUser}: ${bound.status}`);
  }
  return { customerId, bankAccountId };
}

/** Opens the demo customer's EUR account (its document valid for two more years); resolves to its id. */
async function openDemoBankAccount(baseUrl: string, partnerToken: string, customerId: string): Promise<string> {
  const expires = new Date();
  expires.setUTCFullYear(expires.getUTCFullYear() + 2);
  const answer = await fetch(`${baseUrl}/api/v1/bank-accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${partnerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...DEMO_BANK_ACCOUNT_BODY, customer_id: customerId, expiration_date: expires.toISOString().slice(0, 10) }),
  });
  const body = (await answer.json()) as { data: { id?: string } | null; error: { id: string; code?: string } | null };
  if (answer.status !== 201 || !body.data?.id) {
    throw new Error(`The demo account could not be opened: ${answer.status} ${body.error?.code ?? ''} (error id ${body.error?.id ?? 'none'})`);
  }
  return body.data.id;
}
