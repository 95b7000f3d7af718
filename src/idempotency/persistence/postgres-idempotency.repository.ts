import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThanOrEqual, Repository } from 'typeorm';
import type { AuditEvent } from '../../audit/trail/domain/audit-event';
import { AuditLog, CommittedEvent } from '../../audit/trail/domain/audit-log.port';
import { Sql } from '../../database/sql';
import { unavailableOnOutage } from '../../database/store-errors';
import { Claim } from '../domain/idempotency';
import { ClaimRequest, IdempotencyStore, KeptResult, KeptWrite, OwnClaim } from '../domain/idempotency-store.port';
import { IdempotencyKeyEntity } from './idempotency-key.entity';
import { DataBox } from '../../common/domain/sealed-box.port';

/**
 * One statement claims references: insert each, or take it over when it expired, or when its own
 * client's attempt with the same fingerprint was released or abandoned in flight. References are
 * unique across the gateway; the row lock of ON CONFLICT serialises concurrent claims, so exactly
 * one of them gets its key back. Each field arrives as an array, one element per claim: claims
 * made at the same moment share the statement (see AuditLog.appendAlong), at most one per reference.
 */
const CLAIM_SQL = `
  INSERT INTO idempotency_keys AS k (client_id, reference, operation, fingerprint, state, locked_until, result, created_at, expires_at)
  SELECT c.client_id, c.reference, c.operation, c.fingerprint, 'in_flight', c.locked_until, NULL, c.created_at, c.expires_at
  FROM unnest($1::uuid[], $2::uuid[], $3::varchar[], $4::char(64)[], $5::timestamptz[], $6::timestamptz[], $7::timestamptz[])
    AS c(client_id, reference, operation, fingerprint, locked_until, created_at, expires_at)
  ON CONFLICT (reference) DO UPDATE
    SET client_id = EXCLUDED.client_id, operation = EXCLUDED.operation, fingerprint = EXCLUDED.fingerprint, state = 'in_flight',
        locked_until = EXCLUDED.locked_until, result = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE k.expires_at <= EXCLUDED.created_at
       OR (k.client_id = EXCLUDED.client_id AND k.fingerprint = EXCLUDED.fingerprint
           AND (k.state = 'retryable' OR (k.state = 'in_flight' AND k.locked_until <= EXCLUDED.created_at)))
  RETURNING k.reference AS key`;

/**
 * A provider write's end, stored with its request's terminal event (AuditLog.appendWith): its
 * result, whichever attempt at the reference stores it (the provider's answer to the reference is
 * the answer). Over arrays, like the claim: ends at the same moment share the statement.
 */
const COMPLETE_SQL = `
  UPDATE idempotency_keys AS k SET state = 'completed', result = c.result, locked_until = NULL
  FROM unnest($1::uuid[], $2::uuid[], $3::jsonb[]) AS c(client_id, reference, result)
  WHERE k.client_id = c.client_id AND k.reference = c.reference
  RETURNING k.reference AS key`;

/** Or its claim released for a retry: this claim only (not a later one of the reference), while in flight. */
const RELEASE_SQL = `
  UPDATE idempotency_keys AS k SET state = 'retryable', locked_until = NULL
  FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) AS c(client_id, reference, claimed_at)
  WHERE k.client_id = c.client_id AND k.reference = c.reference AND k.created_at = c.claimed_at AND k.state = 'in_flight'
  RETURNING k.reference AS key`;

/** What a kept answer is sealed to: it opens as no other reference's. */
const resultContext = (reference: string): string => `idempotency:${reference.toLowerCase()}`;

/**
 * A result to replay, sealed under DATA_KEY (a bank account's answer holds its IBAN, or its sort
 * code and account number): stored as a JSON string, the JWE, in the jsonb column.
 */
export function sealResult(box: DataBox, reference: string, result: unknown): Promise<string> {
  return box.seal({ result }, resultContext(reference));
}

/** A kept result, opened; one kept before answers were sealed (an object) as it is, until the first start seals it (idempotency-sealing.ts). */
export async function openResult(box: DataBox, reference: string, kept: unknown): Promise<unknown> {
  if (typeof kept !== 'string') return kept;
  return (await box.open<{ result: unknown }>(kept, resultContext(reference))).result;
}

@Injectable()
export class PostgresIdempotencyRepository extends IdempotencyStore {
  constructor(
    @InjectRepository(IdempotencyKeyEntity) private readonly rows: Repository<IdempotencyKeyEntity>,
    private readonly sql: Sql,
    private readonly audit: AuditLog,
    private readonly box: DataBox,
  ) {
    super();
  }

  /** With `attempted`, the claim is the write the event rides with (AuditLog.appendAlong): one statement, one commit. */
  claim(request: ClaimRequest, attempted?: AuditEvent): Promise<Claim> {
    return unavailableOnOutage(async () => {
      const { key } = request;
      const values = [key.clientId, key.reference, request.operation, request.fingerprint, request.lockedUntil, request.now, request.expiresAt];
      const claimed = attempted
        ? // The key as the statement returns it: a uuid's text is lower case whatever case it came in.
          await this.audit.appendAlong(attempted, { sql: CLAIM_SQL, values, key: key.reference.toLowerCase() })
        : (
            await this.sql.query(
              CLAIM_SQL,
              values.map((value) => [value]),
            )
          ).length === 1;
      if (claimed) return { kind: 'claimed' };
      const held = await this.rows.findOneBy({ reference: key.reference });
      if (!held) return { kind: 'in_flight', since: request.now }; // purged between the two statements: a retry claims it
      if (held.clientId !== key.clientId) return { kind: 'taken' };
      if (held.fingerprint !== request.fingerprint) return { kind: 'mismatch' };
      if (held.state === 'completed') return { kind: 'completed', result: await openResult(this.box, held.reference, held.result) };
      return { kind: 'in_flight', since: held.createdAt };
    });
  }

  async complete(claim: OwnClaim, result: unknown, concluded?: AuditEvent): Promise<CommittedEvent | undefined> {
    const sealed = await sealResult(this.box, claim.key.reference, result);
    return this.end(COMPLETE_SQL, [claim.key.clientId, claim.key.reference, JSON.stringify(sealed)], claim, concluded);
  }

  release(claim: OwnClaim, concluded?: AuditEvent): Promise<CommittedEvent | undefined> {
    return this.end(RELEASE_SQL, [claim.key.clientId, claim.key.reference, claim.claimedAt], claim, concluded);
  }

  /** With the terminal event, in its statement (AuditLog.appendWith); alone, as a one-row statement. */
  private end(sql: string, values: unknown[], claim: OwnClaim, concluded?: AuditEvent): Promise<CommittedEvent | undefined> {
    return unavailableOnOutage(async () => {
      if (concluded) return (await this.audit.appendWith(concluded, { sql, values, key: claim.key.reference.toLowerCase() })).committed;
      await this.sql.query(
        sql,
        values.map((value) => [value]),
      );
      return undefined;
    });
  }

  async keptWrites(operation: string, except: (references: string[]) => Promise<Set<string>>): Promise<KeptWrite[]> {
    const rows = await unavailableOnOutage(() =>
      this.sql.query<{ reference: string; created_at: Date; client_id: string }>(
        `SELECT reference, created_at, client_id FROM idempotency_keys WHERE operation = $1 AND state = 'completed' AND result IS NOT NULL ORDER BY created_at`,
        [operation],
      ),
    );
    const skipped = rows.length === 0 ? new Set<string>() : await except(rows.map((row) => row.reference));
    return rows.filter((row) => !skipped.has(row.reference)).map((row) => ({ reference: row.reference, createdAt: row.created_at, clientId: row.client_id }));
  }

  async keptResult(reference: string): Promise<KeptResult | undefined> {
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<{ result: unknown }>(`SELECT result FROM idempotency_keys WHERE reference = $1 AND state = 'completed' AND result IS NOT NULL`, [
        reference,
      ]),
    );
    if (!row) return undefined;
    try {
      return { result: await openResult(this.box, reference, row.result) };
    } catch {
      return { unreadable: true };
    }
  }

  async purgeExpired(now: Date): Promise<number> {
    const result = await this.rows.delete({ expiresAt: LessThanOrEqual(now) });
    return result.affected ?? 0;
  }
}
