/**
 * The audit sealer as operators see it (readiness, /metrics): whether it runs, how far the signed
 * chain reaches, and how long the next event has waited to be sealed. PCI DSS v4 10.7.2 asks that a
 * failure of audit logging be detected and alerted on; this is what detects it.
 */
export type SealerState =
  /** Sealing every second. */
  | 'running'
  /** Its last round failed (the database refused or did not answer); it tries again every second. */
  | 'failing'
  /** It found the chain removed, replaced or forged, and will not sign over it: see `reason`. */
  | 'stopped'
  /** AUDIT_SEALING=false. */
  | 'off';

export interface SealerStatus {
  readonly state: SealerState;
  /** Why it is failing or stopped. */
  readonly reason?: string;
  readonly newestCheckpoint: { readonly seq: number; readonly sealedAt: Date } | null;
  /** When the oldest event waiting to be sealed (the next in seal order) occurred; null when none waits. */
  readonly oldestUnsealedAt: Date | null;
  /** AUDIT_SEAL_MAX_LAG_SECONDS: an event waiting longer means the sealer lags. */
  readonly maxLagSeconds: number;
  /** When the chain and the waiting events were last read; null before the first read. */
  readonly checkedAt: Date | null;
}

/** Seconds the oldest waiting event has waited at `now` (0 when none waits). */
export function unsealedAgeSeconds(status: SealerStatus, now: Date): number {
  return status.oldestUnsealedAt ? Math.max(0, (now.getTime() - status.oldestUnsealedAt.getTime()) / 1000) : 0;
}

/** Reports the sealer's status; the audit feature provides it. */
export abstract class AuditSealMonitor {
  abstract status(): SealerStatus;
}
