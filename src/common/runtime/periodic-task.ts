import { Logger } from '@nestjs/common';

export interface PeriodicTask {
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `task` after `firstDelayMs` and then every `periodMs`, never two at once, logging failures
 * instead of crashing. Timers are unref'd: they never keep the process alive. One fixed period per
 * job needs no scheduler library.
 */
export function startPeriodicTask(name: string, firstDelayMs: number, periodMs: number, task: () => Promise<unknown>): PeriodicTask {
  const logger = new Logger(name);
  let running: Promise<unknown> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const run = () => {
    if (running) return;
    running = task()
      .catch((error: unknown) => logger.warn({ err: error }, `${name} failed; it runs again in ${Math.round(periodMs / 60_000)} min`))
      .finally(() => {
        running = undefined;
      });
  };
  timer = setTimeout(() => {
    run();
    timer = setInterval(run, periodMs).unref();
  }, firstDelayMs).unref();
  return {
    async stop() {
      clearTimeout(timer);
      clearInterval(timer);
      await running;
    },
  };
}
