import type { Gateway, GatewayListeners } from './gateway.js';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * Runs a started gateway until SIGINT or SIGTERM (or, when it serves stdio
 * only, until its client closes stdin), then closes it: running calls
 * finish, up to `drainTimeoutMs`. A second signal exits at once; the core
 * still ends the stdio upstreams from the process's `exit` event. Resolves
 * with the exit code.
 */
export function runUntilStopped(gateway: Gateway, listeners: GatewayListeners): Promise<number> {
  const { logger } = gateway;
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (reason: string): void => {
      if (stopping) {
        logger.warn({ event: 'gateway.forced_exit', reason }, `${reason} again: exiting without waiting`);
        logger.flush();
        process.exit(1);
      }
      stopping = true;
      logger.info({ event: 'gateway.stopping', reason }, `${reason}: closing, letting running calls finish`);
      gateway.close().then(
        () => {
          for (const signal of SIGNALS) process.off(signal, handlers[signal]);
          logger.info({ event: 'gateway.stopped' }, 'gateway stopped');
          resolve(0);
        },
        (error: unknown) => {
          logger.error({ event: 'gateway.close_failed', err: error }, 'closing the gateway failed');
          resolve(1);
        },
      );
    };
    const handlers = { SIGINT: () => stop('SIGINT'), SIGTERM: () => stop('SIGTERM') };
    for (const signal of SIGNALS) process.on(signal, handlers[signal]);
    // A stdio server belongs to the client that started it: when it goes, so does the gateway.
    if (listeners.stdio && !listeners.http) process.stdin.once('end', () => stop('stdin closed'));
  });
}
