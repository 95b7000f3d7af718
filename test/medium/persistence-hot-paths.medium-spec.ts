import { BackgroundWork } from '../../src/common/domain/background-work';
import { randomUUID } from 'node:crypto';
import { AuditEvent } from '../../src/audit/trail/domain/audit-event';
import { AuditSearch } from '../../src/audit/search/domain/audit-search.port';
import { AuditLog } from '../../src/audit/trail/domain/audit-log.port';
import { AuditSealStore } from '../../src/audit/seal/domain/audit-seal.port';
import { RequestLogStore } from '../../src/audit/requests/domain/request-log.port';
import { CustomerOwnership } from '../../src/partner-api/customers/domain/customer-ownership.port';
import { ProofReplay } from '../../src/auth/domain/proof-replay.port';
import { PostgresProofReplayRepository } from '../../src/auth/persistence/postgres-proof-replay.repository';
import { SharedCommit } from '../../src/database/shared-commit';
import { Sql } from '../../src/database/sql';
import { isRefusedData } from '../../src/database/store-errors';
import { startTestApp, TestApp } from '../support/app';

/** The writes and reads every partner request makes, against the real tables. */
describe('persistence on the request path', () => {
  let t: TestApp;
  let log: AuditLog;
  let search: AuditSearch;
  let ownership: CustomerOwnership;

  beforeAll(async () => {
    t = await startTestApp();
    log = t.app.get(AuditLog);
    search = t.app.get(AuditSearch, { strict: false });
    ownership = t.app.get(CustomerOwnership);
  });
  afterAll(async () => {
    await t.close();
  });

  function event(overrides: Partial<AuditEvent> = {}): AuditEvent {
    return { id: randomUUID(), occurredAt: new Date(), requestId: randomUUID(), operation: 'balance.read', phase: 'succeeded', ...overrides };
  }

  /** An event with its fields set, but the caller's kind, the staff's and the trace's. */
  function everyField(overrides: Partial<AuditEvent> = {}): AuditEvent {
    return event({
      clientId: randomUUID(),
      clientName: 'ios-app',
      tenant: 'acme',
      sourceIp: '2001:db8::1',
      operation: 'bank_account.create',
      phase: 'unknown',
      httpMethod: 'POST',
      route: '/api/v1/bank-accounts',
      reference: randomUUID(),
      customerId: randomUUID(),
      currency: 'EUR',
      httpStatus: 502,
      upstreamStatus: 500,
      errorId: randomUUID(),
      errorCode: 'UPSTREAM.UNAVAILABLE',
      upstreamErrorId: 'prov-err-17',
      errorMessage: 'The provider did not answer',
      latencyMs: 1234,
      upstreamLatencyMs: 1200,
      replayed: true,
      upstreamAttempts: [
        { retry: 0, status: 503, latencyMs: 40, errorId: 'prov-err-16' },
        { retry: 1, latencyMs: 1000, failure: 'timeout' },
      ],
      ...overrides,
    });
  }

  describe('a transaction on pg (Sql.transaction, as the sealer runs one every second)', () => {
    it('when the server ends its connection between two of its statements, then the transaction fails and the process goes on (no unhandled error)', async () => {
      const sql = t.app.get(Sql);
      const ended = sql.transaction(async (query) => {
        const [{ pid }] = await query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await t.asOwner('SELECT pg_terminate_backend($1)', [pid]);
        // The server's notice arrives while no statement runs: the connection's 'error' event.
        await new Promise((resolve) => setTimeout(resolve, 200));
        return query('SELECT 1');
      });

      await expect(ended).rejects.toThrow();
      await expect(sql.query<{ one: number }>('SELECT 1 AS one', [])).resolves.toEqual([{ one: 1 }]);
    });
  });

  describe('audit events', () => {
    it('when an event carries every field, then each one is stored as given, but when it occurred, which the database records itself', async () => {
      const full = everyField({ occurredAt: new Date('2026-03-04T05:06:07.089Z') });

      const before = Date.now();
      await log.append(full);

      const stored = await search.get(full.id);
      expect(stored).toEqual({ ...full, occurredAt: expect.any(Date) });
      // The database's now(), not the date the event came with: the service's role may not write it.
      expect(stored!.occurredAt.getTime()).toBeGreaterThanOrEqual(before - 5_000);
      expect(stored!.occurredAt.getTime()).toBeLessThanOrEqual(Date.now() + 5_000);
    });

    it('when an event leaves the optional fields out, then they are stored empty and replayed is false', async () => {
      const bare = event();

      await log.append(bare);

      expect(await search.get(bare.id)).toEqual({ ...bare, occurredAt: expect.any(Date), replayed: false });
    });

    it('when 300 events are written at once, then all are stored, sharing a few commits between them', async () => {
      const events = Array.from({ length: 300 }, () => event());

      await Promise.all(events.map((one) => log.append(one)));

      const ids = events.map((one) => one.id);
      const [stored]: { events: string; commits: string }[] = await t.dataSource.query(
        'SELECT count(*) AS events, count(DISTINCT xmin::text) AS commits FROM audit_events WHERE id = ANY($1::uuid[])',
        [ids],
      );
      expect(Number(stored.events)).toBe(300);
      expect(Number(stored.commits)).toBeLessThanOrEqual(10);
    });

    it('when one event of a batch is refused by the table, then only its writer fails and the rest are stored', async () => {
      const events = Array.from({ length: 20 }, () => event());
      const refused = event({ currency: 'EURO' });
      events.splice(10, 0, refused);

      const outcomes = await Promise.allSettled(events.map((one) => log.append(one)));

      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(1);
      expect(outcomes[10].status).toBe('rejected');
      const [stored]: { events: string }[] = await t.dataSource.query('SELECT count(*) AS events FROM audit_events WHERE id = ANY($1::uuid[])', [
        events.map((one) => one.id),
      ]);
      expect(Number(stored.events)).toBe(20);
      expect(await search.get(refused.id)).toBeUndefined();
    });

    it('when an event’s text carries a lone surrogate, then it is stored with U+FFFD in its place, as any text the service writes', async () => {
      const events = [
        event({ errorMessage: 'property a\ud800b should not exist', clientName: '\udc00app' }),
        event({ errorMessage: 'an emoji 😀 and a backslash \\ud800 stay as they are' }),
      ];

      await Promise.all(events.map((one) => log.append(one)));

      expect(await search.get(events[0].id)).toMatchObject({ errorMessage: 'property a\ufffdb should not exist', clientName: '\ufffdapp' });
      expect(await search.get(events[1].id)).toMatchObject({ errorMessage: 'an emoji 😀 and a backslash \\ud800 stay as they are' });
    });

    it('when a latency is not a finite number, then the event is stored with it empty, not lost', async () => {
      const odd = event({ latencyMs: Number.NaN, upstreamLatencyMs: Number.POSITIVE_INFINITY });

      await log.append(odd);

      const stored = await search.get(odd.id);
      expect(stored).toMatchObject({ id: odd.id });
      expect(stored!.latencyMs).toBeUndefined();
      expect(stored!.upstreamLatencyMs).toBeUndefined();
    });

    it('when one event of a batch carries a NUL, which PostgreSQL’s text cannot hold, then only its writer fails and the rest are stored', async () => {
      const events = Array.from({ length: 20 }, () => event());
      const refused = event({ errorMessage: 'a\u0000b' });
      events.splice(5, 0, refused);

      const outcomes = await Promise.allSettled(events.map((one) => log.append(one)));

      expect(outcomes.map((outcome) => outcome.status)).toEqual(events.map((one) => (one === refused ? 'rejected' : 'fulfilled')));
      const [stored]: { events: string }[] = await t.dataSource.query('SELECT count(*) AS events FROM audit_events WHERE id = ANY($1::uuid[])', [
        events.map((one) => one.id),
      ]);
      expect(Number(stored.events)).toBe(20);
    });
  });

  describe('an audit event written alone (one parameter per column) and in a batch (one JSON parameter)', () => {
    /** Every field, and the values each form must turn into the same stored row; only the id differs between events. */
    const shared = everyField({
      clientName: '\udc00app',
      errorMessage: 'property a\ud800b, an emoji 😀 and a backslash \\ud800',
      latencyMs: Number.NaN,
      upstreamLatencyMs: Number.POSITIVE_INFINITY,
      callerKind: 'staff',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      staffId: 'staff-1',
      staffRoles: ['support', 'compliance'],
      accessReason: 'ticket 42',
      breakGlass: true,
      upstreamAttempts: [
        { retry: 0, status: 503, latencyMs: 40, errorId: 'prov-err-\ud800' },
        { retry: 1, latencyMs: 1000, failure: 'timeout' },
      ],
    });
    const alike = (): AuditEvent => ({ ...shared, id: randomUUID() });

    it('when the same event is written alone and in a batch, then both are stored alike', async () => {
      const alone = alike();
      const batched = Array.from({ length: 4 }, () => alike());

      // Nothing else in flight: the first goes at once, alone; the others arrive while it is in flight and go together once this turn of the event loop has run.
      await Promise.all([alone, ...batched].map((one) => log.append(one)));

      const commits: { id: string; commit: string }[] = await t.dataSource.query(
        'SELECT id, xmin::text AS commit FROM audit_events WHERE id = ANY($1::uuid[])',
        [[alone, ...batched].map((one) => one.id)],
      );
      const commitOf = new Map(commits.map((row) => [row.id, row.commit]));
      expect(new Set(batched.map((one) => commitOf.get(one.id))).size).toBe(1);
      expect(commitOf.get(alone.id)).not.toBe(commitOf.get(batched[0].id));
      const storedAlone = await search.get(alone.id);
      const storedBatched = await search.get(batched[0].id);
      const ignored = { id: expect.any(String), occurredAt: expect.any(Date) };
      expect({ ...storedAlone, ...ignored }).toEqual({ ...storedBatched, ...ignored });
      expect(storedAlone).toMatchObject({
        requestId: shared.requestId,
        clientId: shared.clientId,
        clientName: '\ufffdapp',
        errorMessage: 'property a\ufffdb, an emoji 😀 and a backslash \\ud800',
        upstreamStatus: 500,
      });
      expect(storedAlone!.latencyMs).toBeUndefined();
      expect(storedAlone!.upstreamLatencyMs).toBeUndefined();
      expect(storedAlone!.upstreamAttempts).toEqual([
        { retry: 0, status: 503, latencyMs: 40, errorId: 'prov-err-\ufffd' },
        { retry: 1, latencyMs: 1000, failure: 'timeout' },
      ]);
    });

    it('when an event written alone carries a NUL, then its writer fails and the next event is stored', async () => {
      const refused = event({ errorMessage: 'a\u0000b' });
      const next = event();

      const failure = await log.append(refused).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isRefusedData(failure)).toBe(true);
      await log.append(next);

      expect(await search.get(refused.id)).toBeUndefined();
      expect(await search.get(next.id)).toMatchObject({ id: next.id });
    });
  });

  describe('audit events and DPoP proofs of the same moment (one shared statement, SharedCommit)', () => {
    const inAMinute = () => new Date(Date.now() + 60_000);
    /** The transactions that wrote the proofs (`dpop_proofs.key`) and the events. */
    async function commitsOf(keys: string[], ids: string[]): Promise<{ proofs: Set<string>; events: Set<string> }> {
      const proofs: { tx: string }[] = await t.dataSource.query('SELECT xmin::text AS tx FROM dpop_proofs WHERE key = ANY($1::text[])', [keys]);
      const events: { tx: string }[] = await t.dataSource.query('SELECT xmin::text AS tx FROM audit_events WHERE id = ANY($1::uuid[])', [ids]);
      return { proofs: new Set(proofs.map((row) => row.tx)), events: new Set(events.map((row) => row.tx)) };
    }

    it('when events and proofs arrive together, then they share commits, each event is stored and each proof is a first use', async () => {
      const replay = t.app.get(ProofReplay);
      const events = Array.from({ length: 60 }, () => event());
      const keys = Array.from({ length: 60 }, () => randomUUID());

      const [, answers] = await Promise.all([
        Promise.all(events.map((one) => log.append(one))),
        Promise.all(keys.map((key) => replay.useOnce(key, inAMinute()))),
      ]);

      expect(answers).toEqual(keys.map(() => true));
      const commits = await commitsOf(
        keys,
        events.map((one) => one.id),
      );
      // Every transaction that wrote proofs wrote events too: none went in a statement of its own.
      expect([...commits.proofs].filter((tx) => !commits.events.has(tx))).toEqual([]);
      const [stored]: { events: string }[] = await t.dataSource.query('SELECT count(*) AS events FROM audit_events WHERE id = ANY($1::uuid[])', [
        events.map((one) => one.id),
      ]);
      expect(Number(stored.events)).toBe(60);
    });

    it('when a proof is used twice in one shared batch, then the first use is accepted and the second is a replay, in the commit of the events beside them', async () => {
      const replay = t.app.get(ProofReplay);
      const key = randomUUID();
      const ahead = event();
      const events = Array.from({ length: 5 }, () => event());

      // The first event goes at once; what arrives while it is in flight waits for the next batch, together.
      const inFlight = log.append(ahead);
      const [first, second] = await Promise.all([replay.useOnce(key, inAMinute()), replay.useOnce(key, inAMinute()), ...events.map((one) => log.append(one))]);
      await inFlight;

      expect([first, second]).toEqual([true, false]);
      expect(await replay.useOnce(key, inAMinute())).toBe(false);
      const commits = await commitsOf(
        [key],
        events.map((one) => one.id),
      );
      expect(commits.proofs.size).toBe(1);
      expect([...commits.events]).toEqual([...commits.proofs]);
    });

    it('when proofs are past their window, then the sweep deletes them, keeps the live ones, and passes over one a statement is writing without waiting for it', async () => {
      const replay = t.app.get<ProofReplay, PostgresProofReplayRepository>(ProofReplay);
      // Only this test's sweeps run: the service's own, once a minute, stops here.
      await replay.onApplicationShutdown();
      const [expired, locked, live] = [randomUUID(), randomUUID(), randomUUID()];
      await replay.useOnce(expired, new Date(Date.now() - 1000));
      await replay.useOnce(locked, new Date(Date.now() - 1000));
      await replay.useOnce(live, inAMinute());
      const writer = t.dataSource.createQueryRunner();
      await writer.startTransaction();
      try {
        expect(await writer.query('SELECT key FROM dpop_proofs WHERE key = $1 FOR UPDATE', [locked])).toHaveLength(1);

        // A sweep that waits on the lock waits until it is released: the bound only ends the test well before its own timeout.
        let timer: NodeJS.Timeout | undefined;
        const swept = await Promise.race([replay.sweep(), new Promise<string>((resolve) => (timer = setTimeout(() => resolve('waited on the lock'), 20_000)))]);
        clearTimeout(timer);

        expect(typeof swept).toBe('number');
        const left: { key: string }[] = await t.dataSource.query('SELECT rtrim(key) AS key FROM dpop_proofs WHERE key = ANY($1::text[]) ORDER BY key', [
          [expired, locked, live],
        ]);
        expect(left.map((row) => row.key)).toEqual([locked, live].sort());
      } finally {
        await writer.rollbackTransaction();
        await writer.release();
      }
      await replay.sweep();
      const [gone]: { count: string }[] = await t.dataSource.query('SELECT count(*) FROM dpop_proofs WHERE key = $1', [locked]);
      expect(Number(gone.count)).toBe(0);
    });

    it('when two replicas record the same new proofs at once, in opposite orders, then neither waits on the other in a cycle: each proof is accepted once', async () => {
      const sql = t.app.get(Sql);
      const replicas = [
        new PostgresProofReplayRepository(t.dataSource, new SharedCommit(sql), new BackgroundWork('all')),
        new PostgresProofReplayRepository(t.dataSource, new SharedCommit(sql), new BackgroundWork('all')),
      ];
      for (let round = 0; round < 5; round++) {
        const keys = Array.from({ length: 50 }, () => randomUUID());
        const [ahead, behind] = await Promise.all([
          Promise.all(keys.map((key) => replicas[0].useOnce(key, inAMinute()))),
          Promise.all([...keys].reverse().map((key) => replicas[1].useOnce(key, inAMinute()))),
        ]);
        const firstUses = keys.map((_key, index) => Number(ahead[index]) + Number(behind[keys.length - 1 - index]));
        expect(firstUses).toEqual(keys.map(() => 1));
      }
    });

    it('when an event of a shared batch carries a NUL, then only its writer fails: the other events are stored and the proofs beside it are recorded once', async () => {
      const replay = t.app.get(ProofReplay);
      const events = Array.from({ length: 10 }, () => event());
      const refused = event({ errorMessage: 'a\u0000b' });
      events.splice(4, 0, refused);
      const keys = Array.from({ length: 10 }, () => randomUUID());

      const [outcomes, answers] = await Promise.all([
        Promise.allSettled(events.map((one) => log.append(one))),
        Promise.all(keys.map((key) => replay.useOnce(key, inAMinute()))),
      ]);

      expect(outcomes.map((outcome) => outcome.status)).toEqual(events.map((one) => (one === refused ? 'rejected' : 'fulfilled')));
      expect(answers).toEqual(keys.map(() => true));
      expect(await Promise.all(keys.map((key) => replay.useOnce(key, inAMinute())))).toEqual(keys.map(() => false));
    });
  });

  describe('a reference or customer searched again and again (each search is audited under it, as audit.query)', () => {
    const reference = randomUUID();
    const customerId = randomUUID();
    const tenant = `tenant-${randomUUID()}`;
    const opening = randomUUID();
    const partner: Partial<AuditEvent> = { reference, customerId, tenant, clientId: randomUUID(), callerKind: 'partner' };
    const own: AuditEvent[] = [
      event({ ...partner, requestId: opening, operation: 'bank_account.create', phase: 'attempted' }),
      event({ ...partner, requestId: opening, operation: 'bank_account.create', phase: 'succeeded', httpStatus: 201 }),
      event({ ...partner, operation: 'balance.read', phase: 'succeeded', httpStatus: 200 }),
    ];
    const SEARCHES = 200;
    /** Each subject a read may name, with its index. */
    const SUBJECTS = [
      ['reference', { reference }, 'audit_events_by_reference_idx'],
      ['customer', { customerId }, 'audit_events_by_customer_idx'],
    ] as const;

    beforeAll(async () => {
      for (const one of own) await log.append(one);
      await Promise.all(
        Array.from({ length: SEARCHES }, () =>
          log.append(event({ reference, customerId, operation: 'audit.query', clientId: randomUUID(), callerKind: 'admin' })),
        ),
      );
      // The partner's other requests: more of them than searches, so that its tenant's index is no way round.
      await Promise.all(Array.from({ length: 2 * SEARCHES }, () => log.append(event({ ...partner, reference: randomUUID(), customerId: randomUUID() }))));
      // Everyone else's events, newer: the subject is a small share of the log, as it is in production (where
      // its index is the plan PostgreSQL picks), not a third of a test's table (where a walk by time may look as cheap).
      // A quarter of them account openings, as busy partners' are: the receipt's operation is no rarer than a reference.
      await t.asOwner(
        `INSERT INTO audit_events (id, request_id, operation, phase, reference, customer_id)
         SELECT gen_random_uuid(), md5(g::text), CASE WHEN g % 4 = 0 THEN 'bank_account.create' ELSE 'balance.read' END, 'succeeded', gen_random_uuid(), gen_random_uuid()
         FROM generate_series(1, 20000) g`,
      );
      await t.asOwner('ANALYZE audit_events');
    });

    /**
     * The plan PostgreSQL runs for the one statement `read` sends through `on` (pg, or TypeORM's
     * DataSource) with `marker` in its text (by default, the search's and the request log's), with what each scan of audit_events in it read. Picked
     * by its text, and by `about` among its values when given: the sealer, which runs beside the test, sends its own statements meanwhile,
     * and the count of unresolved calls (every 30 s) sends the statement reconciliation does.
     */
    async function scansOf(
      read: () => Promise<unknown>,
      on: { query: (text: string, values: unknown[]) => Promise<unknown> } = t.app.get(Sql),
      marker = 'AS position FROM audit_events e',
      about?: unknown,
    ) {
      // Each statement is recorded as it goes, and runs as it would.
      const sent: [string, unknown[]][] = [];
      const query = on.query;
      const own = Object.hasOwn(on, 'query');
      on.query = function (this: unknown, text: string, values: unknown[], ...rest: unknown[]) {
        sent.push([text, values]);
        return (query as (...args: unknown[]) => Promise<unknown>).call(this, text, values, ...rest);
      };
      try {
        await read();
      } finally {
        // The method as it was: the prototype's again, where it came from there.
        if (own) on.query = query;
        else delete (on as { query?: unknown }).query;
      }
      const picked = sent.filter(([text, values]) => text.includes(marker) && (about === undefined || (values ?? []).includes(about)));
      expect(picked).toHaveLength(1);
      const [[text, values]] = picked;
      const sql = t.app.get(Sql);
      const [{ 'QUERY PLAN': plan }] = await sql.transaction(async (query) => {
        // Only the index can answer: the test table is small enough that a scan of it would do.
        await query('SET LOCAL enable_seqscan = off');
        await query('SET LOCAL enable_bitmapscan = off');
        return query<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
      });
      const scans: Record<string, unknown>[] = [];
      const walk = (node: Record<string, unknown>) => {
        if (node['Relation Name'] === 'audit_events') scans.push(node);
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk(plan[0].Plan);
      return scans;
    }

    it.each(SUBJECTS)(
      'when its events are searched by %s, then the search answers them and its index reads them alone, not the searches about them',
      async (_, filter, index) => {
        const page = await search.find(filter, 50);
        expect(page.events.map((one) => one.id)).toEqual(own.map((one) => one.id).reverse());

        const [scan, ...others] = await scansOf(() => search.find(filter, 50));
        expect(others).toEqual([]);
        expect(scan).toMatchObject({ 'Index Name': index, 'Actual Rows': own.length });
        expect(scan['Rows Removed by Filter'] ?? 0).toBe(0);
      },
    );

    it('when the searches about it are searched (operation=audit.query), then they are found, newest first, past its own events', async () => {
      const first = await search.find({ reference, operation: 'audit.query' }, 150);
      const second = await search.find({ reference, operation: 'audit.query' }, 150, first.next);

      const found = [...first.events, ...second.events];
      expect(found).toHaveLength(SEARCHES);
      expect(found.every((one) => one.operation === 'audit.query')).toBe(true);
      expect(second.next).toBeUndefined();
      // Newest first, across the two pages (the reference's own events are left out: they are not audit.query).
      const times = found.map((one) => one.occurredAt.getTime());
      expect(times).toEqual([...times].sort((a, b) => b - a));
    });

    it.each(SUBJECTS)(
      'when the partner’s request log is filtered by %s, then it reads the subject’s own events, not the searches about them',
      async (_, filter, index) => {
        const requests = t.app.get(RequestLogStore);
        const page = await requests.list({ tenant, ...filter }, 20);
        // Each request once, by its last event: the account opening’s success and the balance read.
        expect(page.requests.map((one) => one.id)).toEqual([own[2].id, own[1].id]);

        // The page's reading (a bounded stretch of the index: the first statement); the second finds where that stretch ends.
        const scans = await scansOf(() => requests.list({ tenant, ...filter }, 20), t.dataSource, 'SELECT e.* FROM (SELECT e.*');
        const [scan] = scans.filter((one) => one['Index Name'] === index);
        expect(scan).toBeDefined();
        expect(Number(scan['Actual Rows']) + Number(scan['Rows Removed by Filter'] ?? 0)).toBeLessThanOrEqual(own.length);
      },
    );

    it('when a replay looks for the success it repeats (its receipt), then it finds it past the newer searches about its reference, which its index does not read', async () => {
      const seal = t.app.get(AuditSealStore);

      expect(await seal.originalSuccess(tenant, reference, 'bank_account.create')).toMatchObject({ eventId: own[1].id, httpStatus: 201 });
      expect(await seal.originalSuccess(tenant, reference, 'customer.create')).toBeUndefined();

      const scans = await scansOf(() => seal.originalSuccess(tenant, reference, 'bank_account.create'), t.app.get(Sql), 'AND NOT e.replayed');
      expect(scans).toHaveLength(1);
      expect(scans[0]).toMatchObject({ 'Index Name': 'audit_events_by_reference_idx' });
      // Newest first, it stops at the first success: it reads no search about the reference, and at most the reference's own events.
      expect(Number(scans[0]['Actual Rows']) + Number(scans[0]['Rows Removed by Filter'] ?? 0)).toBeLessThanOrEqual(own.length);
    });

    it('when reconciliation looks for one reference’s calls with no outcome (--reference), then it finds the attempt by the reference’s index and reads only the reference’s own events, not the searches about it', async () => {
      // A reference of its own: an opening attempted, no outcome, and searched as often as the one above.
      const pending = randomUUID();
      const attempt = event({ ...partner, reference: pending, operation: 'bank_account.create', phase: 'attempted' });
      await log.append(attempt);
      await Promise.all(
        Array.from({ length: SEARCHES }, () =>
          log.append(event({ reference: pending, operation: 'audit.query', clientId: randomUUID(), callerKind: 'admin' })),
        ),
      );
      // On a busy log every account opening writes its attempt first: attempts as common as the openings above (a quarter
      // of the other events). With attempts rare, PostgreSQL finds them by the phase's index, which is right for that data.
      await t.asOwner(
        `INSERT INTO audit_events (id, request_id, operation, phase, reference, customer_id)
         SELECT gen_random_uuid(), md5('attempt' || g::text), 'bank_account.create', 'attempted', gen_random_uuid(), gen_random_uuid()
         FROM generate_series(1, 5000) g`,
      );
      // The planner's figures with these rows in them, as autovacuum would have them on a live log.
      await t.asOwner('ANALYZE audit_events');
      const query = { attemptedBefore: new Date(Date.now() + 60_000), reference: pending, limit: 10 };

      const page = await log.unresolved(query);
      expect(page.calls.map((one) => [one.requestId, one.state])).toEqual([[attempt.requestId, 'no_outcome']]);
      // The reference above: its opening succeeded, so it has none.
      expect((await log.unresolved({ ...query, reference })).calls).toEqual([]);

      const scans = await scansOf(() => log.unresolved(query), t.app.get(Sql), 'AS ended_unknown', pending);
      // The attempt itself, its outcome (lateral), and its failure and success (the two NOT EXISTS). The attempt is found by
      // the reference's index. The other three ask for the attempt's request in a rare phase, or its operation's success:
      // PostgreSQL may read them by the reference's index, the request's or the phase's, as its figures make one cheaper.
      // Whichever it takes, no read goes past the reference's own events into the searches about it.
      expect(scans).toHaveLength(4);
      const attemptRead = scans.filter((scan) => `${String(scan['Index Cond'])} ${String(scan['Filter'])}`.includes("'attempted'"));
      expect(attemptRead.map((scan) => scan['Index Name'])).toEqual(['audit_events_by_reference_idx']);
      for (const scan of scans) expect(Number(scan['Actual Rows']) + Number(scan['Rows Removed by Filter'] ?? 0)).toBeLessThanOrEqual(1);
    });
  });

  describe("customers' tenants", () => {
    it('when a customer is not known yet, then that is not remembered: its tenant is found once it is assigned', async () => {
      const customerId = randomUUID();
      expect(await ownership.tenantOf(customerId)).toBeUndefined();

      await t.dataSource.query(`INSERT INTO customer_tenants (customer_id, tenant, linked_by) VALUES ($1, 'acme', 'linked')`, [customerId]);

      expect(await ownership.tenantOf(customerId)).toBe('acme');
    });

    it('when a tenant has been found, then it is answered from memory without asking the database again', async () => {
      const customerId = randomUUID();
      await ownership.assign(customerId, 'acme', 'created');
      expect(await ownership.tenantOf(customerId)).toBe('acme');

      // Nothing deletes these rows; this stands in for "the database is not asked".
      await t.dataSource.query('DELETE FROM customer_tenants WHERE customer_id = $1', [customerId]);

      expect(await ownership.tenantOf(customerId)).toBe('acme');
    });

    it('when another tenant already holds the customer, then assign answers that tenant and it is the one remembered', async () => {
      const customerId = randomUUID();
      await ownership.assign(customerId, 'first', 'created');

      expect(await ownership.assign(customerId, 'second', 'linked')).toBe('first');
      expect(await ownership.tenantOf(customerId)).toBe('first');
    });
  });
});
