import { OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';

/** How long readiness's round trip may take, on the server and on the wire. */
const PING_TIMEOUT_MS = 2000;

/**
 * A connection of readiness's own, outside the service's pool: a pool busy with requests (or with
 * a flood of them) makes readiness wait behind none of them, so a replica whose PostgreSQL answers
 * stays ready. One connection, opened at the first check and kept (with TCP keep-alive); after any
 * failure it is dropped, and the next check opens a new one, so a connection lost in silence never
 * keeps readiness failing once PostgreSQL answers again.
 */
export class ReadinessConnection implements OnApplicationShutdown {
  private pool: Pool;

  constructor(private readonly url: string) {
    this.pool = this.open();
  }

  /** One round trip to PostgreSQL on the reserved connection. */
  async ping(): Promise<void> {
    try {
      await this.pool.query('SELECT 1');
    } catch (error) {
      const broken = this.pool;
      this.pool = this.open();
      void broken.end().catch(() => undefined);
      throw error;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }

  private open(): Pool {
    const pool = new Pool({
      connectionString: this.url,
      max: 1,
      idleTimeoutMillis: 0,
      connectionTimeoutMillis: PING_TIMEOUT_MS,
      keepAlive: true,
      statement_timeout: PING_TIMEOUT_MS,
      query_timeout: PING_TIMEOUT_MS + 500,
      application_name: 'partner-gateway readiness',
    });
    // A connection lost while idle is dropped from the pool; the next check opens another.
    pool.on('error', () => undefined);
    return pool;
  }
}
