import { buildBankAccountRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';
import { ReplicaSet, startReplicas } from '../support/replicas';

/**
 * The built service as a process, so that what Node itself prints (its process warnings, such as
 * MaxListenersExceededWarning) is in the output read here.
 */
describe('many requests at once, on the built service', () => {
  let set: ReplicaSet;

  beforeAll(async () => {
    set = await startReplicas(1, { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_IP_PER_MINUTE: '100000' });
  });
  afterAll(async () => {
    await set.close();
  });

  it('when 300 balance reads and 100 account openings run at once, then all succeed and the process prints no warning (no listener outlives its call)', async () => {
    const [gateway] = set.replicas;
    const partner = await set.createClient('partner');
    const customerId = await createCustomer(gateway.base, partner);

    const answers = await Promise.all([
      ...Array.from({ length: 300 }, () => callApi(gateway.base, 'GET', `/api/v1/customers/${customerId}/balance`, { token: partner })),
      ...Array.from({ length: 100 }, () =>
        callApi(gateway.base, 'POST', '/api/v1/bank-accounts', { token: partner, body: buildBankAccountRequest({ customer_id: customerId }) }),
      ),
    ]);
    // One more request after the burst: whatever the burst made Node print is in the output by then.
    await callApi(gateway.base, 'GET', `/api/v1/customers/${customerId}/balance`, { token: partner });

    expect(answers.filter((a) => a.status >= 300).map((a) => a.body.error?.code)).toEqual([]);
    expect(
      gateway.process
        .output()
        .split('\n')
        .filter((line) => /Warning/.test(line)),
    ).toEqual([]);
  });
});
