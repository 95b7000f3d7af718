import { Injectable } from '@nestjs/common';
import type { Transaction } from '../common/domain/unit-of-work.port';
import { UnitOfWork } from '../common/domain/unit-of-work.port';
import { Query, Sql } from './sql';
import { unavailableOnOutage } from './store-errors';

/** What a Transaction is to the PostgreSQL adapters: the query function of its connection. */
interface PgTransaction {
  readonly query: Query;
}

/** The statements of a transaction the unit of work opened (a store adapter's side of Transaction). */
export function queryIn(tx: Transaction): Query {
  return (tx as unknown as PgTransaction).query;
}

/** Transactions on the service's pool (Sql.transaction): BEGIN, the stores' statements, COMMIT. */
@Injectable()
export class PgUnitOfWork extends UnitOfWork {
  constructor(private readonly sql: Sql) {
    super();
  }

  run<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return unavailableOnOutage(() => this.sql.transaction((query) => work({ query } satisfies PgTransaction as unknown as Transaction)));
  }
}
