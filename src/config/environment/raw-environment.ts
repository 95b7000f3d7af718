/**
 * The environment as read, before any feature's class types it: every feature's class is made from
 * the same variables, so that a condition may name another feature's (live mode is
 * UPSTREAM_BASE_URL set; production is NODE_ENV).
 */
export type RawEnvironment = Readonly<Record<string, unknown>>;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Live mode: a real provider is named. */
export const liveMode = (env: { readonly UPSTREAM_BASE_URL?: unknown }): boolean => Boolean(env.UPSTREAM_BASE_URL);
