import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

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
}
