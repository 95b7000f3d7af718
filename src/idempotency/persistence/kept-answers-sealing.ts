import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DataBox } from '../../common/domain/sealed-box.port';
import { BackgroundWork } from '../../common/domain/background-work';
import { Sql } from '../../database/sql';
import { sealResult } from './postgres-idempotency.repository';

/**
 * Answers kept in clear before they were sealed (a bank account's holds its identifiers), sealed at
 * start, a batch at a time, so that no table holds an identifier readable without DATA_KEY. An
 * answer sealed meanwhile by a replay's own write is left as it is (the update asks for the clear one).
 */
@Injectable()
export class KeptAnswersSealing implements OnApplicationBootstrap {
  private readonly logger = new Logger('Idempotency');

  constructor(
    private readonly sql: Sql,
    private readonly box: DataBox,
    private readonly background: BackgroundWork,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.background.runs) return;
    const sealed = await this.sealClearAnswers();
    if (sealed > 0) this.logger.log({ sealed }, 'Kept answers stored in clear sealed under DATA_KEY');
  }

  async sealClearAnswers(): Promise<number> {
    let sealed = 0;
    for (;;) {
      const clear = await this.sql.query<{ reference: string; result: unknown }>(
        `SELECT reference, result FROM idempotency_keys WHERE jsonb_typeof(result) NOT IN ('string', 'null') LIMIT 500`,
        [],
      );
      if (clear.length === 0) return sealed;
      for (const row of clear) {
        const box = await sealResult(this.box, row.reference, row.result);
        await this.sql.query(`UPDATE idempotency_keys SET result = $2 WHERE reference = $1 AND jsonb_typeof(result) NOT IN ('string', 'null')`, [
          row.reference,
          JSON.stringify(box),
        ]);
        sealed += 1;
      }
    }
  }
}
