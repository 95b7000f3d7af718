import { Injectable } from '@nestjs/common';
import { DataBox } from '../../../common/domain/sealed-box.port';
import { eventInsertSql, nextSequenceSql } from '../../../database/partner-event-outbox.sql';
import { Query, Sql } from '../../../database/sql';
import { AttemptRecord, DeliveryEnding, DeliveryJobs, DueDelivery } from '../domain/delivery.ports';
import { FAILURE_RUN_GAP_HOURS } from '../domain/delivery-schedule';
import { ASK_FOR_ATTEMPT, ENDPOINT_COLUMNS, EndpointRow, endpointOf, secretContext } from './postgres-webhook-endpoints.repository';

/** The most of an endpoint's answer the delivery log keeps. */
const KEPT_RESPONSE_BYTES = 1024;

interface DueRow extends EndpointRow {
  delivery_id: string;
  status: DueDelivery['status'];
  attempts: number;
  generation: number;
  event_id: string;
  secret: string;
  previous_secret: string | null;
  waits: boolean;
}

/** The delivery's event's resource, which an ordered endpoint's deliveries are serialised on. */
const SAME_RESOURCE_EARLIER = `
  SELECT 1 FROM webhook_deliveries d2 JOIN partner_events e2 ON e2.id = d2.event_id
  WHERE d2.endpoint_id = d.endpoint_id AND e2.resource_type = ev.resource_type AND e2.resource_id = ev.resource_id
    AND e2.sequence < ev.sequence AND d2.status IN ('pending', 'waiting')`;

@Injectable()
export class PostgresDeliveryJobs extends DeliveryJobs {
  constructor(
    private readonly sql: Sql,
    private readonly box: DataBox,
  ) {
    super();
  }

  async fanOut(eventId: string): Promise<number> {
    const [{ made }] = await this.sql.query<{ made: number }>(
      `WITH made AS (
         INSERT INTO webhook_deliveries (endpoint_id, event_id, status)
         SELECT w.id, e.id, 'pending' FROM partner_events e JOIN webhook_endpoints w ON w.tenant = e.tenant
         WHERE e.id = $1 AND w.enabled AND (cardinality(w.event_types) = 0 OR e.type = ANY(w.event_types))
         ON CONFLICT (endpoint_id, event_id) DO NOTHING
         RETURNING id)
       SELECT count(*)::int AS made FROM (SELECT ${ASK_FOR_ATTEMPT('made.id')} FROM made) asked`,
      [eventId],
    );
    return made;
  }

  async load(deliveryId: string): Promise<DueDelivery | undefined> {
    const [row] = await this.sql.query<DueRow>(
      `SELECT ${ENDPOINT_COLUMNS}, w.secret, CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END AS previous_secret,
              d.id AS delivery_id, d.status, d.attempts, d.generation, d.event_id, (w.ordered AND EXISTS (${SAME_RESOURCE_EARLIER})) AS waits
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN partner_events ev ON ev.id = d.event_id
       WHERE d.id = $1`,
      [deliveryId],
    );
    if (!row) return undefined;
    const secrets = [row.secret, ...(row.previous_secret ? [row.previous_secret] : [])];
    return {
      id: row.delivery_id,
      status: row.status,
      attempts: row.attempts,
      generation: row.generation,
      eventId: row.event_id,
      endpoint: endpointOf(row),
      secrets: await Promise.all(secrets.map(async (sealed) => (await this.box.open<{ secret: string }>(sealed, secretContext(row.id))).secret)),
      waitsForEarlier: row.waits,
    };
  }

  async wait(deliveryId: string): Promise<void> {
    await this.sql.transaction(async (query) => {
      await this.lockResource(query, deliveryId);
      // Looked at again under the lock: the one before may have ended since, and would then not have asked for this one.
      const [{ waits }] = await query<{ waits: boolean }>(
        `SELECT EXISTS (${SAME_RESOURCE_EARLIER}) AS waits FROM webhook_deliveries d JOIN partner_events ev ON ev.id = d.event_id WHERE d.id = $1`,
        [deliveryId],
      );
      if (waits) await query(`UPDATE webhook_deliveries SET status = 'waiting', updated_at = clock_timestamp() WHERE id = $1`, [deliveryId]);
      else await query(`SELECT ${ASK_FOR_ATTEMPT('$1::uuid', "now() + interval '10 milliseconds'")}`, [deliveryId]);
    });
  }

  async finish(delivery: DueDelivery, attempt: AttemptRecord, ending: DeliveryEnding): Promise<void> {
    const next = ending.status === 'pending' ? ending.nextAttemptAt.toISOString() : null;
    await this.sql.transaction(async (query) => {
      if (delivery.endpoint.ordered) await this.lockResource(query, delivery.id);
      await query(
        `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempt, attempted_at, http_status, latency_ms, response, failure, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          delivery.id,
          delivery.endpoint.id,
          delivery.eventId,
          attempt.attempt,
          attempt.attemptedAt.toISOString(),
          attempt.httpStatus ?? null,
          attempt.latencyMs,
          attempt.response === undefined ? null : excerpt(attempt.response),
          attempt.failure ?? null,
          next,
        ],
      );
      // Only the delivery as it was loaded: a redelivery, or another run of this attempt, that ended meanwhile wins.
      const moved = await query(
        `UPDATE webhook_deliveries SET status = $2, attempts = $3, next_attempt_at = $4, updated_at = clock_timestamp()
         WHERE id = $1 AND generation = $5 AND attempts = $6 AND status IN ('pending', 'waiting') RETURNING id`,
        [delivery.id, ending.status, attempt.attempt, next, delivery.generation, delivery.attempts],
      );
      if (moved.length === 0) return;
      if (next) await query(`SELECT ${ASK_FOR_ATTEMPT('$1::uuid', '$2::timestamptz')}`, [delivery.id, next]);
      // An endpoint's run of failures: from its first failed attempt since it last took one, and
      // without a day's gap between two failures (a failure after a quiet day starts a new run).
      await query(
        ending.status === 'succeeded'
          ? `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`
          : `UPDATE webhook_endpoints
             SET failing_since = CASE WHEN failing_since IS NULL OR last_failure_at < $2::timestamptz - interval '${FAILURE_RUN_GAP_HOURS} hours' THEN $2::timestamptz ELSE failing_since END,
                 last_failure_at = $2::timestamptz
             WHERE id = $1`,
        ending.status === 'succeeded' ? [delivery.endpoint.id] : [delivery.endpoint.id, attempt.attemptedAt.toISOString()],
      );
      if (ending.status === 'failed' && ending.disable) await this.disable(query, delivery.endpoint.id, ending.disable);
      // Whether or not the endpoint is still ordered: a delivery left waiting is never stranded.
      if (ending.status !== 'pending') await this.askForNextWaiting(query, delivery.id);
    });
  }

  /** Disables the endpoint, with the `webhook_endpoint.disabled` event that says so (to the tenant's other endpoints). */
  private async disable(query: Query, endpointId: string, reason: string): Promise<void> {
    await query(
      `WITH off AS (
         UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1 AND enabled
         RETURNING id, tenant, url),
       ${eventInsertSql(
         'said',
         'webhook_endpoint.disabled',
         'webhook_endpoint',
         `SELECT o.tenant, o.id::text AS resource_id, ${nextSequenceSql('webhook_endpoint', 'o.id::text')} AS sequence, NULL::text AS request_id,
                 NULL::text AS reference, NULL::text AS audit_event_id, jsonb_build_object('id', o.id, 'reason', $2::text) AS data,
                 jsonb_build_object('id', o.id, 'enabled', false, 'disabled_reason', $2::text) AS snapshot
          FROM off o`,
       )}
       SELECT 1`,
      [endpointId, reason],
    );
  }

  /** The next waiting delivery of the same endpoint and resource, in sequence, now due. */
  private async askForNextWaiting(query: Query, deliveryId: string): Promise<void> {
    await query(
      `WITH next AS (
         UPDATE webhook_deliveries n SET status = 'pending', updated_at = clock_timestamp()
         WHERE n.id = (
           SELECT d2.id FROM webhook_deliveries d JOIN partner_events ev ON ev.id = d.event_id
             JOIN webhook_deliveries d2 ON d2.endpoint_id = d.endpoint_id JOIN partner_events e2 ON e2.id = d2.event_id
           WHERE d.id = $1 AND e2.resource_type = ev.resource_type AND e2.resource_id = ev.resource_id AND d2.status = 'waiting'
           ORDER BY e2.sequence LIMIT 1)
         RETURNING n.id)
       SELECT ${ASK_FOR_ATTEMPT('next.id')} FROM next`,
      [deliveryId],
    );
  }

  /** Serialises an ordered endpoint's deliveries of one resource: whoever waits and whoever ends take turns. */
  private async lockResource(query: Query, deliveryId: string): Promise<void> {
    await query(
      `SELECT pg_advisory_xact_lock(hashtext('webhook:' || d.endpoint_id || ':' || ev.resource_type || ':' || ev.resource_id))
       FROM webhook_deliveries d JOIN partner_events ev ON ev.id = d.event_id WHERE d.id = $1`,
      [deliveryId],
    );
  }
}

/** The first 1 KiB of an answer, cut on a character. */
function excerpt(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= KEPT_RESPONSE_BYTES) return text;
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, KEPT_RESPONSE_BYTES)).replace(/\uFFFD$/, '');
}
