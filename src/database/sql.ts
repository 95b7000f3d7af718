import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

export type Query = <Row = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<Row[]>;

/**
 * SQL straight on pg, on the pool TypeORM opened (no second pool): for the few statements every
 * request runs, where TypeORM's query runner would cost more than the statement. TypeORM keeps the
 * schema, the migrations and everything else. Rows come back as pg returns them; errors are pg's
 * own (store-errors.ts reads either).
 */
export class Sql {
  constructor(private readonly pool: Pool) {}

  static of(dataSource: DataSource): Sql {
    return new Sql((dataSource.driver as PostgresDriver).master as Pool);
  }

  async query<Row = Record<string, unknown>>(text: string, values: unknown[]): Promise<Row[]> {
    return (await this.pool.query(text, values)).rows as Row[];
  }

  /**
   * The same, as a prepared statement: parsed once per connection under `name`, and planned once
   * PostgreSQL finds its generic plan as good as a custom one. For the statements every write runs.
   */
  async prepared<Row = Record<string, unknown>>(name: string, text: string, values: unknown[]): Promise<Row[]> {
    return (await this.pool.query({ name, text, values })).rows as Row[];
  }

  /**
   * Runs `work` in one transaction on one connection: committed when it resolves, rolled back when
   * it throws. The connection listens for its own failure while it is checked out: pg's pool stops
   * listening once it hands a connection out, so a connection the server ends between two of the
   * transaction's statements (a restart, `pg_terminate_backend`) would otherwise raise an error
   * nobody handles, and end the process.
   */
  async transaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: unknown;
    const lost = (error: Error) => {
      broken = error;
    };
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const result = await work(async <Row>(text: string, values: unknown[] = []) => (await client.query(text, values)).rows as Row[]);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError;
      });
      throw error;
    } finally {
      client.removeListener('error', lost);
      // A connection whose rollback failed, or that failed, is in an unknown state: closed, not reused.
      client.release(broken instanceof Error ? broken : undefined);
    }
  }
}
