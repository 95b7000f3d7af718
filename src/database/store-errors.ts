import { QueryFailedError } from 'typeorm';
import { DomainError } from '../common/domain/domain-error';

/** The database cannot be reached or is not accepting work: a 503 for the caller, not a 500. */
export class DatabaseUnavailable extends DomainError {
  constructor(cause: unknown) {
    super('DATABASE.UNAVAILABLE', {
      retryAfterSeconds: 5,
      cause,
    });
  }
}

/**
 * SQLSTATE classes that mean "not now" rather than "wrong query": connection exceptions (08),
 * insufficient resources (53), operator intervention such as a shutdown (57), and a database that
 * is not accepting connections (55000) or does not exist (3D000).
 */
const UNAVAILABLE_STATES = /^(08|53|57)|^55000$|^3D000$/;

export function isDatabaseUnavailable(error: unknown): boolean {
  // The service's own errors carry a code too (AUDIT.UNAVAILABLE): they are never the driver's.
  if (error instanceof DomainError) return false;
  const driverError = error instanceof QueryFailedError ? (error.driverError as unknown) : error;
  const code = (driverError as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') {
    if (/^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_STATES.test(code);
    return true; // ECONNREFUSED, ETIMEDOUT, ...: the socket, not the query
  }
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|pool.*(ended|destroyed)/i.test(
    message,
  );
}

/**
 * The statement was refused because of the values it carried: a data exception (SQLSTATE class 22,
 * such as a value too long) or an integrity constraint (class 23).
 */
export function isRefusedData(error: unknown): boolean {
  const driverError = error instanceof QueryFailedError ? (error.driverError as unknown) : error;
  const code = (driverError as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

/** Runs a store operation, turning "database down" into DatabaseUnavailable. */
export async function unavailableOnOutage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw isDatabaseUnavailable(error) ? new DatabaseUnavailable(error) : error;
  }
}
