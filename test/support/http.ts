import { buildCustomerRequest } from './builders';

/** The envelope as a partner app receives it. */
export interface Envelope<T = Record<string, unknown>> {
  status: number;
  message: string;
  data: T | null;
  error: { id: string; code?: string; details: string; message: string; fields?: { field: string; message: string }[]; doc_url?: string } | null;
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: Envelope<T>;
}

/** A JSON call to the service, as a partner app makes it. */
export async function callApi<T = Record<string, unknown>>(
  baseUrl: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  options: { token?: string; body?: unknown; requestId?: string; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...options.headers };
  if (options.requestId) headers['x-request-id'] = options.requestId;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text) as Envelope<T> };
}

/** Creates a customer through the service, as the token's tenant; returns its id. */
export async function createCustomer(baseUrl: string, token: string, body: Record<string, unknown> = buildCustomerRequest()): Promise<string> {
  return customerIdOf(await callApi(baseUrl, 'POST', '/api/v1/customers', { token, body }));
}

/**
 * createCustomer, for a suite that runs the service with a provider timeout of a few hundred
 * milliseconds (to test timeouts quickly). The first call of a new service and sandbox pays for
 * their cold start (compiling, the first use of each key, the first connection), which a busy
 * machine can stretch past such a timeout; that is not what these suites test. A 504
 * UPSTREAM.TIMEOUT is tried again, with a new reference (the provider may have kept the first
 * call, and would refuse its reference), at most `attempts` times in all. Any other answer fails
 * at once, as createCustomer does.
 */
export async function createCustomerPastColdStart(baseUrl: string, token: string, attempts = 5): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const created = await callApi(baseUrl, 'POST', '/api/v1/customers', { token, body: buildCustomerRequest() });
    const timedOut = created.status === 504 && created.body.error?.code === 'UPSTREAM.TIMEOUT';
    if (!timedOut || attempt >= attempts) return customerIdOf(created);
  }
}

/** The new customer's id from the service's answer; anything but 201 fails the test's setup. */
function customerIdOf(created: Answer): string {
  if (created.status !== 201) throw new Error(`customer not created: ${created.status} ${JSON.stringify(created.body.error)}`);
  return created.body.data!.customer_id as string;
}
