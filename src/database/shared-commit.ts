import { createHash } from 'node:crypto';
import { GroupCommit } from './group-commit';
import { Sql } from './sql';
import { isRefusedData } from './store-errors';

/**
 * A kind of row whose writes share statements with the other kinds of a SharedCommit. Its SQL reads
 * the batch's rows of this kind from one JSON text parameter, whose placeholder (`$1`, `$2`…) it is
 * given, since its place depends on the kinds the statement carries.
 */
export interface SharedPart<T, R> {
  /** Lower-case letters: the prepared statements' names are made of the kinds they carry. */
  readonly name: string;
  /**
   * Its data-modifying WITH queries, each named `<name>_…` (PostgreSQL takes them only at a
   * statement's top level, so a part's queries sit beside the others' there), and, when its rows
   * are answered, a SELECT over them of `n` (the 1-based position of a row in `json`'s array) and
   * `answer` (text), one row per element.
   */
  readonly sql: (parameter: string) => { readonly with: readonly string[]; readonly answer?: string };
  /** For a kind whose rows are not answered: the statement for a batch of it alone, when a plainer one than its WITH queries serves. */
  readonly alone?: (parameter: string) => string;
  /**
   * For a kind whose rows are not answered: the statement for one row alone, with a parameter per
   * column (`$1`…), and that row's values, which must write what its JSON would. One request at a
   * time writes every row alone, and PostgreSQL takes a row's values faster than it reads them out
   * of JSON (docs/benchmarks.md, "One row alone").
   */
  readonly one?: { readonly sql: string; readonly values: (row: T) => unknown[] };
  /** The rows as the JSON text the SQL reads. */
  readonly json: (rows: readonly T[]) => string;
  /** Each row's result, in order, from the answers by `n` (undefined for an `n` the SQL did not answer). */
  readonly results: (rows: readonly T[], answers: ReadonlyMap<number, string>) => R[];
}

interface Entry {
  readonly part: SharedPart<unknown, unknown>;
  readonly row: unknown;
}

/**
 * One group commit for the rows of several stores (GroupCommit): what the requests of one moment
 * write, an audit event of one and a DPoP proof's use of another, goes as one statement with one
 * commit, instead of one of each. Each statement is named by its kinds and its text's digest
 * (`shared:audit+proofs:…`) and prepared once per connection; each row still learns when it is committed, and what its kind's SQL
 * answered for it. A batch refused for one row's data is split in halves down to that row, as any group commit's.
 */
export class SharedCommit {
  private readonly parts: SharedPart<unknown, unknown>[] = [];
  private readonly commits = new GroupCommit<Entry, unknown>((entries) => this.writeEntries(entries), {
    maxBatch: 200,
    maxInFlight: 2,
    isRowError: isRefusedData,
  });
  /** Each statement by the kinds it carries (`audit+proofs`), and a part's statement for one row alone by `<name>:one`. */
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly sql: Sql) {}

  /** Where `part`'s rows are written: resolves once the row is committed, to its result. */
  writerOf<T, R>(part: SharedPart<T, R>): (row: T) => Promise<R> {
    if (!/^[a-z]+$/.test(part.name) || this.parts.some((known) => known.name === part.name))
      throw new Error(`A shared commit's part needs a new lower-case name: ${part.name}`);
    if ((part.alone || part.one) && part.sql('$1').answer !== undefined)
      throw new Error(`The shared commit's part ${part.name} answers its rows, so it has no statement alone`);
    const known = part as SharedPart<unknown, unknown>;
    this.parts.push(known);
    if (part.one) this.statements.set(`${part.name}:one`, named(`${part.name}:one`, part.one.sql));
    return (row: T) => this.commits.write({ part: known, row }) as Promise<R>;
  }

  private async writeEntries(entries: Entry[]): Promise<unknown[]> {
    const one = entries.length === 1 ? entries[0].part.one : undefined;
    if (one) {
      const { part, row } = entries[0];
      const { name, text } = this.statements.get(`${part.name}:one`)!;
      await this.sql.prepared(name, text, one.values(row));
      return part.results([row], new Map());
    }
    // The parts in the order they were made: the same kinds always make the same statement.
    const present = this.parts.filter((part) => entries.some((entry) => entry.part === part));
    const rowsOf = new Map(present.map((part) => [part, entries.filter((entry) => entry.part === part).map((entry) => entry.row)]));
    const { name, text } = this.statementOf(present);
    const answered = await this.sql.prepared<{ part: string | null; n: number | null; answer: string | null }>(
      name,
      text,
      present.map((part) => part.json(rowsOf.get(part)!)),
    );
    const resultsOf = new Map(
      present.map((part) => {
        const answers = new Map<number, string>();
        for (const row of answered) if (row.part === part.name && row.n !== null && row.answer !== null) answers.set(row.n, row.answer);
        return [part, part.results(rowsOf.get(part)!, answers)];
      }),
    );
    const next = new Map(present.map((part) => [part, 0]));
    return entries.map((entry) => {
      const index = next.get(entry.part)!;
      next.set(entry.part, index + 1);
      return resultsOf.get(entry.part)![index];
    });
  }

  /** The statement for the kinds present. */
  private statementOf(present: readonly SharedPart<unknown, unknown>[]): Statement {
    const kinds = present.map((part) => part.name).join('+');
    let statement = this.statements.get(kinds);
    if (statement !== undefined) return statement;
    const alone = present.length === 1 ? present[0].alone : undefined;
    let text: string;
    if (alone) {
      text = alone('$1');
    } else {
      const parts = present.map((part, index) => ({ name: part.name, ...part.sql(`$${index + 1}`) }));
      const answers = parts
        .filter((part) => part.answer !== undefined)
        .map((part) => `SELECT '${part.name}'::text AS part, a.n::int AS n, a.answer::text AS answer FROM (${part.answer}) a`);
      text =
        `WITH ${parts.flatMap((part) => part.with).join(', ')} ` +
        (answers.length > 0 ? answers.join(' UNION ALL ') : 'SELECT NULL::text AS part, NULL::int AS n, NULL::text AS answer WHERE false');
    }
    statement = named(kinds, text);
    this.statements.set(kinds, statement);
    return statement;
  }
}

interface Statement {
  readonly name: string;
  readonly text: string;
}

/**
 * A statement with its prepared name: what it carries and a digest of its text, so that two
 * statements of different texts never share a name on a connection (pg refuses that).
 */
function named(carries: string, text: string): Statement {
  return { name: `shared:${carries}:${createHash('sha256').update(text).digest('hex').slice(0, 12)}`, text };
}
