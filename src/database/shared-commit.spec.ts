import { SharedCommit, SharedPart } from './shared-commit';
import type { Sql } from './sql';

interface Statement {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * What SharedCommit sends, without a database: each prepared statement is recorded and answered by
 * `answer`, as soon as the test lets it (`finish`). What PostgreSQL makes of the statements is the
 * medium tests' (test/medium/persistence-hot-paths.medium-spec.ts); this holds how rows of several
 * kinds are put into statements and how each caller gets its own answer back.
 */
function recordingSql(answer: (statement: Statement) => unknown[] = () => []) {
  const sent: Statement[] = [];
  const pending: (() => void)[] = [];
  const sql = {
    prepared: (name: string, text: string, values: unknown[]) =>
      new Promise<unknown[]>((resolve) => {
        const statement = { name, text, values };
        sent.push(statement);
        pending.push(() => resolve(answer(statement)));
      }),
  } as unknown as Sql;
  const finish = async () => {
    while (pending.length > 0) {
      pending.splice(0).forEach((done) => done());
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { sql, sent, finish };
}

/** A kind whose rows are not answered, with a statement for one row alone. */
const events: SharedPart<{ id: string }, void> = {
  name: 'events',
  sql: (parameter) => ({ with: [`events_in AS (INSERT INTO events (id) SELECT id FROM json_to_recordset(${parameter}::json) AS t(id text))`] }),
  one: { sql: 'INSERT INTO events (id) VALUES ($1::text)', values: (row) => [row.id] },
  json: (rows) => JSON.stringify(rows),
  results: (rows) => rows.map(() => undefined),
};

/** A kind whose rows are answered: `true` for each key the statement answers `true` for, by its position. */
const keys: SharedPart<string, boolean> = {
  name: 'keys',
  sql: (parameter) => ({
    with: [`keys_in AS (SELECT k.key, k.n FROM json_array_elements_text(${parameter}::json) WITH ORDINALITY AS k(key, n))`],
    answer: 'SELECT n, true AS answer FROM keys_in',
  }),
  json: (rows) => JSON.stringify(rows),
  results: (rows, answers) => rows.map((_row, index) => answers.get(index + 1) === 'true'),
};

describe('SharedCommit', () => {
  it('when a part is named with other than lower-case letters, or like another, then it is refused', () => {
    const shared = new SharedCommit(recordingSql().sql);
    shared.writerOf(events);

    expect(() => shared.writerOf({ ...keys, name: 'Keys' })).toThrow(/new lower-case name: Keys/);
    expect(() => shared.writerOf({ ...keys, name: 'key_s' })).toThrow(/new lower-case name/);
    expect(() => shared.writerOf({ ...keys, name: 'events' })).toThrow(/new lower-case name: events/);
  });

  it('when a part answers its rows, then it may have no statement for one row alone, nor for its kind alone', () => {
    const shared = new SharedCommit(recordingSql().sql);

    expect(() => shared.writerOf({ ...keys, one: { sql: 'SELECT 1', values: () => [] } })).toThrow(/answers its rows/);
    expect(() => shared.writerOf({ ...keys, alone: () => 'SELECT 1' })).toThrow(/answers its rows/);
  });

  it('when one row of a kind with a one-row statement goes alone, then it is written by that statement with its own values', async () => {
    const { sql, sent, finish } = recordingSql();
    const write = new SharedCommit(sql).writerOf(events);

    const written = write({ id: 'e-1' });
    await finish();

    await expect(written).resolves.toBeUndefined();
    expect(sent).toEqual([{ name: expect.stringMatching(/^shared:events:one:[0-9a-f]{12}$/), text: events.one!.sql, values: ['e-1'] }]);
  });

  it('when rows of two kinds arrive while a statement is in flight, then they go as one statement of both, and each caller gets its own answer', async () => {
    const { sql, sent, finish } = recordingSql((statement) =>
      // The second key of the batch is the one answered true (n is 1-based).
      statement.text.includes('keys_in') ? [{ part: 'keys', n: 2, answer: 'true' }] : [],
    );
    const shared = new SharedCommit(sql);
    const writeEvent = shared.writerOf(events);
    const writeKey = shared.writerOf(keys);

    const first = writeEvent({ id: 'e-1' });
    const results = [writeKey('k-1'), writeEvent({ id: 'e-2' }), writeKey('k-2')];
    await finish();

    await expect(first).resolves.toBeUndefined();
    await expect(Promise.all(results)).resolves.toEqual([false, undefined, true]);
    expect(sent).toHaveLength(2);
    const both = sent[1];
    // The parts in the order they were made, each reading its own parameter.
    expect(both.name).toMatch(/^shared:events\+keys:[0-9a-f]{12}$/);
    expect(both.values).toEqual([JSON.stringify([{ id: 'e-2' }]), JSON.stringify(['k-1', 'k-2'])]);
    expect(both.text).toContain('json_to_recordset($1::json)');
    expect(both.text).toContain('json_array_elements_text($2::json)');
    expect(both.text).toMatch(/^WITH events_in AS .*, keys_in AS .* SELECT 'keys'::text AS part/s);
  });

  it('when the same kinds go again, then the statement has the same name; when other kinds go, another name', async () => {
    const { sql, sent, finish } = recordingSql();
    const shared = new SharedCommit(sql);
    const writeEvent = shared.writerOf(events);
    const writeKey = shared.writerOf(keys);

    // Each round: one key alone first (nothing in flight), then what arrives while it is written.
    const round = async (rest: () => Promise<unknown>[]) => {
      const alone = writeKey('alone');
      const others = rest();
      await finish();
      await Promise.all([alone, ...others]);
    };
    await round(() => [writeEvent({ id: 'a' }), writeKey('b')]);
    await round(() => [writeKey('c'), writeEvent({ id: 'd' })]);
    await round(() => [writeEvent({ id: 'e' }), writeEvent({ id: 'f' })]);

    const names = sent.map((statement) => statement.name);
    // A key alone has no one-row statement: its kind's statement carries it.
    expect(names[0]).toMatch(/^shared:keys:/);
    expect(names[1]).toMatch(/^shared:events\+keys:/);
    expect(names[3]).toBe(names[1]);
    expect(names[2]).toBe(names[0]);
    expect(names[5]).toMatch(/^shared:events:/);
    expect(names[5]).not.toMatch(/:one:/);
    expect(new Set(names).size).toBe(3);
  });
});
