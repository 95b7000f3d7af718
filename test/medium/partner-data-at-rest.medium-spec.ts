import { randomBytes, randomUUID } from 'node:crypto';
import { JoseSealedBox } from '../../src/common/sealing/jose-sealed-box';
import { KeptAnswersSealing } from '../../src/idempotency/persistence/kept-answers-sealing';
import { BankAccountReconstruction, RECONSTRUCTION } from '../../src/partner-api/bank-accounts/persistence/bank-account-reconstruction';
import { identifiersContext } from '../../src/partner-api/bank-accounts/persistence/postgres-bank-account.repository';
import { startTestApp, TestApp } from '../support/app';
import { buildBankAccountRequest } from '../support/builders';
import { callApi, createCustomer } from '../support/http';

const DATA_KEY = randomBytes(32);

interface Account {
  id: string;
  iban?: string;
  sort_code?: string;
  account_number?: string;
}

/**
 * Bank accounts' identifiers at rest (docs/security.md, "Partners' data at rest"): sealed under
 * DATA_KEY in every table that holds them, on a real PostgreSQL, and never in the audit log or a
 * log line; the answers kept before sealing, sealed at start; accounts opened before they were
 * recorded, rebuilt from what the service held, and the rest reported.
 */
describe('partner data at rest: bank accounts’ identifiers', () => {
  let t: TestApp;
  let partner: string;
  let customerId: string;
  let eur: Account;
  let gbp: Account;

  const open = async (currency: 'EUR' | 'GBP', body = buildBankAccountRequest({ customer_id: customerId, currency })): Promise<Account> => {
    const answer = await callApi<Account>(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body });
    expect(answer.status).toBe(201);
    return answer.body.data!;
  };
  /** Every row of a table, as text: what someone reading the database without the key sees. */
  const tableText = async (table: string): Promise<string> =>
    (await t.asOwner<{ row: string }>(`SELECT row_to_json(x)::text AS row FROM ${table} x`)).map((r) => r.row).join('\n');

  beforeAll(async () => {
    t = await startTestApp({ DATA_KEY: DATA_KEY.toString('base64') });
    partner = await t.createClient('partner');
    customerId = await createCustomer(t.baseUrl, partner);
    eur = await open('EUR');
    gbp = await open('GBP');
  });

  afterAll(async () => {
    await t?.close();
  });

  it('when accounts are opened, then no table holds an identifier readable without the key, and neither the audit log nor the log', async () => {
    const identifiers = [eur.iban!, gbp.account_number!, gbp.sort_code!];
    expect(identifiers.every((value) => typeof value === 'string' && value.length >= 6)).toBe(true);

    const tables = await t.asOwner<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    const everything = (await Promise.all(tables.map(({ table_name }) => tableText(`"${table_name}"`)))).join('\n');

    expect(tables.map(({ table_name }) => table_name)).toEqual(expect.arrayContaining(['bank_accounts', 'idempotency_keys', 'audit_events']));
    for (const value of identifiers) {
      expect(everything).not.toContain(value);
      expect(t.logs.text).not.toContain(value);
    }
  });

  it('when a sealed row is opened, then only the service’s key opens it, and only as its own account’s', async () => {
    const [row] = await t.asOwner<{ identifiers: string }>('SELECT identifiers FROM bank_accounts WHERE id = $1', [eur.id]);

    const opened = await new JoseSealedBox(DATA_KEY).open<{ iban: string }>(row.identifiers, identifiersContext(eur.id));

    expect(opened.iban).toBe(eur.iban);
    await expect(new JoseSealedBox(randomBytes(32)).open(row.identifiers, identifiersContext(eur.id))).rejects.toThrow();
    await expect(new JoseSealedBox(DATA_KEY).open(row.identifiers, identifiersContext(gbp.id))).rejects.toThrow(/another context/);
  });

  it('when answers were kept in clear before sealing, then the start seals them, and a replay still answers the account', async () => {
    const body = buildBankAccountRequest({ customer_id: customerId, currency: 'EUR' });
    const account = await open('EUR', body);
    // As a kept answer was stored before this change: the account itself, in clear.
    await t.asOwner(`UPDATE idempotency_keys SET result = $2::jsonb WHERE reference = $1`, [
      body.reference,
      JSON.stringify({ ...account, customerId, reference: body.reference, sortCode: undefined, iban: account.iban, status: 'active', currency: 'EUR' }),
    ]);
    expect(await tableText('idempotency_keys')).toContain(account.iban!);

    const sealed = await t.app.get(KeptAnswersSealing).sealClearAnswers();
    const replay = await callApi<Account>(t.baseUrl, 'POST', '/api/v1/bank-accounts', { token: partner, body });

    expect(sealed).toBe(1);
    expect(await tableText('idempotency_keys')).not.toContain(account.iban!);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data).toMatchObject({ id: account.id, iban: account.iban });
  });

  it('when accounts were opened before they were recorded, then those whose answer is kept are rebuilt, and the others are reported by reference', async () => {
    const kept = await open('GBP');
    const lostReference = randomUUID();
    const garbledReference = randomUUID();
    // A kept answer of a shape no account has (null fields): reported, and no reason not to start.
    await t.asOwner(
      `INSERT INTO idempotency_keys (reference, client_id, operation, fingerprint, state, locked_until, result, created_at, expires_at)
       VALUES ($1, $2, 'bank_account.create', repeat('0', 64), 'completed', NULL, '{"id":null,"customerId":"x"}'::jsonb, now(), now() + interval '1 hour')`,
      [garbledReference, randomUUID()],
    );
    // Before this change: no record of either; the second's kept answer has expired, and only its terminal audit event says it was opened.
    await t.asOwner('DELETE FROM bank_accounts WHERE id = $1', [kept.id]);
    await t.asOwner(`DELETE FROM data_upgrades WHERE name = $1`, [RECONSTRUCTION]);
    await t.asOwner(
      `INSERT INTO audit_events (id, request_id, operation, phase, reference, customer_id, currency, http_status, replayed)
       VALUES ($1, 'before-records', 'bank_account.create', 'succeeded', $2, $3, 'EUR', 201, false)`,
      [randomUUID(), lostReference, customerId],
    );

    await t.app.get(BankAccountReconstruction).onApplicationBootstrap();
    const read = await callApi<Account>(t.baseUrl, 'GET', `/api/v1/bank-accounts/${kept.id}`, { token: partner });
    const [upgrade] = await t.asOwner<{ report: { reconstructed: number; notReconstructed: { reference: string; why: string }[] } }>(
      'SELECT report FROM data_upgrades WHERE name = $1',
      [RECONSTRUCTION],
    );
    const [origin] = await t.asOwner<{ origin: string }>('SELECT origin FROM bank_accounts WHERE id = $1', [kept.id]);

    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ id: kept.id, sort_code: kept.sort_code, account_number: kept.account_number });
    expect(origin.origin).toBe('reconstructed');
    expect(upgrade.report.notReconstructed).toEqual([
      { reference: garbledReference, customer_id: null, opened_at: expect.any(String), why: expect.stringContaining('not an account') },
      { reference: lostReference, customer_id: customerId, opened_at: expect.any(String), why: expect.stringContaining('no longer kept') },
    ]);
    expect(upgrade.report.reconstructed).toBe(1);
    expect(JSON.stringify(upgrade.report)).not.toContain(kept.account_number!);
  });

  it('when DATA_KEY is rotated with the old one kept as previous, then every account opens, and the replica seals them again under the new key', async () => {
    const newKey = randomBytes(32);
    const rotated = await startTestApp({ DATA_KEY: newKey.toString('base64'), DATA_PREVIOUS_KEYS: DATA_KEY.toString('base64') }, { database: t.database });
    try {
      const token = await rotated.createClient('partner');
      // What the replica does soon after its start, in the background, and every 10 minutes while a previous key is set
      // (its own pass may come first: what is held is the end state, every row under the new key alone).
      await rotated.app.get(BankAccountReconstruction).resealIdentifiers();
      const stale = await rotated.asOwner<{ n: number }>(`SELECT count(*)::int AS n FROM bank_accounts WHERE identifiers_key <> $1`, [
        new JoseSealedBox(newKey).keyId,
      ]);
      const customers = await callApi<{ bank_account_ids: string[] }>(rotated.baseUrl, 'GET', `/api/v1/customers/${customerId}`, { token });
      const read = await callApi<Account>(rotated.baseUrl, 'GET', `/api/v1/bank-accounts/${eur.id}`, { token });

      expect(stale[0].n).toBe(0);
      expect(customers.body.data!.bank_account_ids).toEqual(expect.arrayContaining([eur.id, gbp.id]));
      expect(read.body.data).toMatchObject({ id: eur.id, iban: eur.iban });
      const [row] = await rotated.asOwner<{ identifiers: string }>('SELECT identifiers FROM bank_accounts WHERE id = $1', [eur.id]);
      expect((await new JoseSealedBox(newKey).open<{ iban: string }>(row.identifiers, identifiersContext(eur.id))).iban).toBe(eur.iban);
    } finally {
      await rotated.app.close();
      await rotated.sandbox.close();
    }
  });
});
