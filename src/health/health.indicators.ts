import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { AuditSealMonitor, unsealedAgeSeconds } from '../common/domain/audit-seal-status';
import { Clock } from '../common/domain/clock.port';
import { UpstreamCircuit } from '../common/domain/upstream';
import { DatabaseRoles } from '../database/database-roles';
import { ReadinessConnection } from '../database/readiness-connection';

/** Readiness of PostgreSQL: a round trip on readiness's own connection (never queued behind the pool), bounded in time. */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly connection: ReadinessConnection,
  ) {}

  check(key: 'database', timeoutMs: number): PromiseLike<HealthIndicatorResult<'database'>> {
    return this.indicators
      .check(key)
      .attempt(async () => {
        await this.connection.ping();
      })
      .withTimeout(timeoutMs);
  }
}

/**
 * The provider's circuit, reported but never failing readiness: taking replicas out of the load
 * balancer does not bring the provider back, and the circuit already answers 503 for it.
 */
@Injectable()
export class UpstreamCircuitIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly upstream: UpstreamCircuit,
  ) {}

  check(key: 'upstream'): HealthIndicatorResult<'upstream'> {
    return this.indicators.check(key).up({ circuit: this.upstream.circuitState() });
  }
}

/**
 * Whether the service's database role could rewrite the audit log (it owns it, or is a superuser):
 * reported, never failing readiness, as the start-up warning says it.
 */
@Injectable()
export class AuditLogProtectionIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly roles: DatabaseRoles,
  ) {}

  check(key: 'auditLog'): HealthIndicatorResult<'auditLog'> {
    const { separated, reason } = this.roles.protection;
    return this.indicators.check(key).up(separated ? { protected: true } : { protected: false, reason });
  }
}

/**
 * The audit sealer: running, failing, stopped or off; the newest checkpoint; how long the oldest
 * event waiting to be sealed has waited, and whether that is past AUDIT_SEAL_MAX_LAG_SECONDS.
 * Reported, never failing readiness: taking every replica out of the load balancer would stop the
 * service without sealing anything, while the alert on these figures (and on /metrics) brings a person.
 */
@Injectable()
export class AuditSealerIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly monitor: AuditSealMonitor,
    private readonly clock: Clock,
  ) {}

  check(key: 'auditSealer'): HealthIndicatorResult<'auditSealer'> {
    const status = this.monitor.status();
    const age = unsealedAgeSeconds(status, this.clock.now());
    return this.indicators.check(key).up({
      state: status.state,
      ...(status.reason ? { reason: status.reason } : {}),
      newestCheckpoint: status.newestCheckpoint && { seq: status.newestCheckpoint.seq, sealedAt: status.newestCheckpoint.sealedAt.toISOString() },
      oldestUnsealedAgeSeconds: Math.round(age * 10) / 10,
      maxLagSeconds: status.maxLagSeconds,
      lagging: status.state !== 'off' && age > status.maxLagSeconds,
      checkedAt: status.checkedAt?.toISOString() ?? null,
    });
  }
}
