import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ListPosition, positionTimeSql } from '../../../common/domain/list-cursor';
import { DataBox } from '../../../common/domain/sealed-box.port';
import { Sql } from '../../../database/sql';
import { unavailableOnOutage } from '../../../database/store-errors';
import type { EventType } from '../../events/domain/event-types';
import { AttemptPage, DeliveryAttempt, DisabledReason, EndpointPage, EndpointSettings, WebhookEndpoint, WebhookEndpoints } from '../domain/webhook-endpoint';

/** What an endpoint's secret is sealed to: it opens as no other endpoint's. */
export const secretContext = (endpointId: string): string => `webhook_endpoint:${endpointId}`;

export interface EndpointRow {
  id: string;
  tenant: string;
  url: string;
  event_types: EventType[];
  enabled: boolean;
  description: string | null;
  ordered: boolean;
  snapshot: boolean;
  disabled_reason: DisabledReason | null;
  previous_secret_until: string | null;
  failing_since: string | null;
  last_failure_at: string | null;
  created_at: string;
  updated_at: string;
}

export const ENDPOINT_COLUMNS = `w.id, w.tenant, w.url, w.event_types, w.enabled, w.description, w.ordered, w.snapshot, w.disabled_reason,
  CASE WHEN w.previous_secret_until > now() THEN ${positionTimeSql('w.previous_secret_until')} END AS previous_secret_until,
  ${positionTimeSql('w.failing_since')} AS failing_since, ${positionTimeSql('w.last_failure_at')} AS last_failure_at,
  ${positionTimeSql('w.created_at')} AS created_at, ${positionTimeSql('w.updated_at')} AS updated_at`;

export function endpointOf(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    tenant: row.tenant,
    url: row.url,
    eventTypes: row.event_types,
    enabled: row.enabled,
    ordered: row.ordered,
    snapshot: row.snapshot,
    ...(row.description !== null ? { description: row.description } : {}),
    ...(row.disabled_reason ? { disabledReason: row.disabled_reason } : {}),
    ...(row.previous_secret_until ? { previousSecretUntil: row.previous_secret_until } : {}),
    ...(row.failing_since ? { failingSince: row.failing_since } : {}),
    ...(row.last_failure_at ? { lastFailureAt: row.last_failure_at } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    position: { at: row.created_at, id: row.id },
  };
}

interface AttemptRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  event_type: string;
  attempt: number;
  attempted_at: string;
  http_status: number | null;
  latency_ms: number;
  response: string | null;
  failure: string | null;
  next_attempt_at: string | null;
}

/** Asks the job engine for a delivery's attempt, now or at `runAt` (webhook_attempt_due: its key replaces a job already waiting for it). */
export const ASK_FOR_ATTEMPT = (deliveryId: string, runAt = 'NULL') => `webhook_attempt_due(${deliveryId}, (${runAt})::timestamptz)`;

@Injectable()
export class PostgresWebhookEndpoints extends WebhookEndpoints {
  constructor(
    private readonly sql: Sql,
    private readonly box: DataBox,
  ) {
    super();
  }

  async create(tenant: string, settings: EndpointSettings, secret: string): Promise<WebhookEndpoint> {
    const id = randomUUID();
    const sealed = await this.box.seal({ secret }, secretContext(id));
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<EndpointRow>(
        `WITH w AS (
           INSERT INTO webhook_endpoints (id, tenant, url, event_types, enabled, description, ordered, snapshot, secret, secret_key)
           VALUES ($1, $2, $3, $4::text[], $5, $6, $7, $8, $9, $10) RETURNING *)
         SELECT ${ENDPOINT_COLUMNS} FROM w`,
        [
          id,
          tenant,
          settings.url,
          settings.eventTypes,
          settings.enabled,
          settings.description ?? null,
          settings.ordered,
          settings.snapshot,
          sealed,
          this.box.keyId,
        ],
      ),
    );
    return endpointOf(row);
  }

  async list(tenant: string, limit: number, after?: ListPosition): Promise<EndpointPage> {
    const values: unknown[] = [tenant];
    let where = 'w.tenant = $1';
    if (after) {
      values.push(after.at, after.id);
      where += ' AND (w.created_at, w.id) < ($2::timestamptz, $3::uuid)';
    }
    values.push(limit + 1);
    const rows = await unavailableOnOutage(() =>
      this.sql.query<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE ${where} ORDER BY w.created_at DESC, w.id DESC LIMIT $${values.length}`,
        values,
      ),
    );
    const endpoints = rows.slice(0, limit).map(endpointOf);
    return { endpoints, ...(rows.length > limit ? { next: endpoints[endpoints.length - 1].position } : {}) };
  }

  async find(id: string, tenant: string): Promise<WebhookEndpoint | undefined> {
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.id = $1 AND w.tenant = $2`, [id, tenant]),
    );
    return row ? endpointOf(row) : undefined;
  }

  async update(id: string, tenant: string, changes: Partial<EndpointSettings>): Promise<WebhookEndpoint | undefined> {
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<EndpointRow>(
        `WITH w AS (
           UPDATE webhook_endpoints SET
             url = coalesce($3, url), event_types = coalesce($4::text[], event_types), enabled = coalesce($5, enabled),
             description = CASE WHEN $6::boolean THEN $7 ELSE description END, ordered = coalesce($8, ordered), snapshot = coalesce($9, snapshot),
             -- Enabled again by its tenant: the reason it was disabled, and its run of failures, are behind it.
             disabled_reason = CASE WHEN $5 THEN NULL ELSE disabled_reason END,
             failing_since = CASE WHEN $5 THEN NULL ELSE failing_since END,
             updated_at = now()
           WHERE id = $1 AND tenant = $2 RETURNING *)
         SELECT ${ENDPOINT_COLUMNS} FROM w`,
        [
          id,
          tenant,
          changes.url ?? null,
          changes.eventTypes ?? null,
          changes.enabled ?? null,
          'description' in changes,
          changes.description ?? null,
          changes.ordered ?? null,
          changes.snapshot ?? null,
        ],
      ),
    );
    if (row && changes.ordered === false) {
      // No longer in order: what waited for an earlier event goes now.
      await unavailableOnOutage(() =>
        this.sql.query(
          `WITH released AS (UPDATE webhook_deliveries SET status = 'pending', updated_at = clock_timestamp() WHERE endpoint_id = $1 AND status = 'waiting' RETURNING id)
           SELECT count(*) FROM (SELECT ${ASK_FOR_ATTEMPT('released.id')} FROM released) asked`,
          [id],
        ),
      );
    }
    return row ? endpointOf(row) : undefined;
  }

  async remove(id: string, tenant: string): Promise<boolean> {
    const rows = await unavailableOnOutage(() => this.sql.query(`DELETE FROM webhook_endpoints WHERE id = $1 AND tenant = $2 RETURNING id`, [id, tenant]));
    return rows.length === 1;
  }

  async rotate(id: string, tenant: string, secret: string, previousUntil?: Date): Promise<WebhookEndpoint | undefined> {
    const sealed = await this.box.seal({ secret }, secretContext(id));
    const [row] = await unavailableOnOutage(() =>
      this.sql.query<EndpointRow>(
        `WITH w AS (
           UPDATE webhook_endpoints SET
             previous_secret = CASE WHEN $4::timestamptz IS NULL THEN NULL ELSE secret END,
             previous_secret_until = $4::timestamptz,
             secret = $3, secret_key = $5, updated_at = now()
           WHERE id = $1 AND tenant = $2 RETURNING *)
         SELECT ${ENDPOINT_COLUMNS} FROM w`,
        [id, tenant, sealed, previousUntil?.toISOString() ?? null, this.box.keyId],
      ),
    );
    return row ? endpointOf(row) : undefined;
  }

  async attempts(filter: { tenant: string; endpointId?: string; eventId?: string }, limit: number, after?: ListPosition): Promise<AttemptPage> {
    const values: unknown[] = [];
    const bind = (value: unknown) => `$${values.push(value)}`;
    const where = [`w.tenant = ${bind(filter.tenant)}`];
    if (filter.endpointId) where.push(`a.endpoint_id = ${bind(filter.endpointId)}::uuid`);
    if (filter.eventId) where.push(`a.event_id = ${bind(filter.eventId)}::uuid`);
    if (after) where.push(`(a.attempted_at, a.id) < (${bind(after.at)}::timestamptz, ${bind(after.id)}::uuid)`);
    const rows = await unavailableOnOutage(() =>
      this.sql.query<AttemptRow>(
        `SELECT a.id, a.event_id, a.endpoint_id, e.type AS event_type, a.attempt, ${positionTimeSql('a.attempted_at')} AS attempted_at, a.http_status,
                a.latency_ms, a.response, a.failure, ${positionTimeSql('a.next_attempt_at')} AS next_attempt_at
         FROM webhook_attempts a JOIN webhook_endpoints w ON w.id = a.endpoint_id JOIN partner_events e ON e.id = a.event_id
         WHERE ${where.join(' AND ')} ORDER BY a.attempted_at DESC, a.id DESC LIMIT ${bind(limit + 1)}`,
        values,
      ),
    );
    const attempts = rows.slice(0, limit).map(attemptOf);
    return { attempts, ...(rows.length > limit ? { next: attempts[attempts.length - 1].position } : {}) };
  }

  async redeliver(endpointId: string, tenant: string, which: { eventId: string } | { from?: string; to?: string }): Promise<number> {
    // A new generation, attempted at once on a fresh schedule: an attempt of the old one still running changes nothing when it ends.
    const rows = await unavailableOnOutage(() =>
      'eventId' in which
        ? // The event's delivery to this endpoint, made now if it never had one (an event from before the endpoint, or of a type it added since).
          this.sql.query<{ id: string }>(
            `WITH made AS (
               INSERT INTO webhook_deliveries (endpoint_id, event_id, status)
               SELECT w.id, e.id, 'pending' FROM webhook_endpoints w JOIN partner_events e ON e.tenant = w.tenant
               WHERE w.id = $1 AND w.tenant = $2 AND e.id = $3
               ON CONFLICT (endpoint_id, event_id) DO UPDATE
                 SET status = 'pending', attempts = 0, generation = webhook_deliveries.generation + 1, next_attempt_at = NULL, updated_at = clock_timestamp()
               RETURNING id)
             SELECT made.id FROM made, LATERAL (SELECT ${ASK_FOR_ATTEMPT('made.id')}) asked`,
            [endpointId, tenant, which.eventId],
          )
        : // Every delivery that ended failed in the range (its last attempt in it), to an endpoint that is enabled.
          this.sql.query<{ id: string }>(
            `WITH redone AS (
               UPDATE webhook_deliveries d SET status = 'pending', attempts = 0, generation = d.generation + 1, next_attempt_at = NULL, updated_at = clock_timestamp()
               WHERE d.id IN (
                 SELECT f.id FROM webhook_deliveries f JOIN webhook_endpoints w ON w.id = f.endpoint_id
                 WHERE w.id = $1 AND w.tenant = $2 AND w.enabled AND f.status = 'failed'
                   AND f.updated_at >= coalesce($3::timestamptz, '-infinity') AND f.updated_at < coalesce($4::timestamptz, 'infinity')
                 ORDER BY f.updated_at LIMIT ${MOST_REDELIVERED})
               RETURNING d.id)
             SELECT redone.id FROM redone, LATERAL (SELECT ${ASK_FOR_ATTEMPT('redone.id')}) asked`,
            [endpointId, tenant, which.from ?? null, which.to ?? null],
          ),
    );
    return rows.length;
  }
}

/** The most deliveries one redelivery of a range asks for: a larger outage is redelivered a range at a time. */
export const MOST_REDELIVERED = 10_000;

function attemptOf(row: AttemptRow): DeliveryAttempt {
  return {
    id: row.id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    eventType: row.event_type,
    attempt: row.attempt,
    attemptedAt: row.attempted_at,
    ...(row.http_status !== null ? { httpStatus: row.http_status } : {}),
    latencyMs: row.latency_ms,
    ...(row.response !== null ? { response: row.response } : {}),
    ...(row.failure !== null ? { failure: row.failure } : {}),
    ...(row.next_attempt_at !== null ? { nextAttemptAt: row.next_attempt_at } : {}),
    position: { at: row.attempted_at, id: row.id },
  };
}
