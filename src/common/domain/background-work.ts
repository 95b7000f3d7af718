/** What a process of the service runs: the API, the background work, or both (the default, and `npm start`'s). */
export const PROCESS_ROLES = ['all', 'api', 'worker'] as const;
export type ProcessRole = (typeof PROCESS_ROLES)[number];

/**
 * Whether this process runs the background work (docs/operations.md, "The worker"): webhook
 * delivery, audit sealing, retention, the reconciliation count, the sweeps, the purge of expired
 * idempotency keys and the data upgrades. API replicas (PROCESS_ROLE=api) run none of it; the
 * worker (`node dist/src/worker.js`) runs all of it; one process alone (`all`) runs both.
 */
export class BackgroundWork {
  readonly runs: boolean;

  constructor(readonly role: ProcessRole) {
    this.runs = role !== 'api';
  }
}
