import { endStdioChildren } from '@sluice/upstream';
import type { Gateway, GatewayListeners } from './gateway.js';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * Runs a gateway until SIGINT or SIGTERM (or, when it serves stdio only,
 * until its client closes stdin), then closes it: running calls finish, up
 * to `drainTimeoutMs`. The signals are heard from the call on, so a signal
 * during start-up stops the gateway as soon as `started` settles. A second
 * signal exits without waiting for calls, but first kills the stdio upstreams
 * and waits until each is reaped, so none outlives the gateway. Resolves with the exit code; when `started`
 * rejects, the caller reports that and this never resolves.
 */
export function runUntilStopped(gateway: Gateway, started: Promise<GatewayListeners>): Promise<number> {
  const { logger } = gateway;
  return new Promise((resolve) => {
    let stopping = false;
    let forced = false;
    const stop = (reason: string): void => {
      if (stopping) {
        if (forced) return;
        forced = true;
        logger.warn(
          { event: 'gateway.forced_exit', reason },
          `${reason} again: ending the stdio upstreams and exiting without waiting for calls`,
        );
        logger.flush?.();
        void endStdioChildren().finally(() => process.exit(1));
        return;
      }
      stopping = true;
      logger.info({ event: 'gateway.stopping', reason }, `${reason}: closing, letting running calls finish`);
      started.then(
        () =>
          gateway.close().then(
            () => {
              detach();
              logger.info({ event: 'gateway.stopped' }, 'gateway stopped');
              resolve(0);
            },
            (error: unknown) => {
              logger.error({ event: 'gateway.close_failed', err: error }, 'closing the gateway failed');
              resolve(1);
            },
          ),
        // A failed start is the caller's to report.
        () => undefined,
      );
    };
    const handlers = { SIGINT: () => stop('SIGINT'), SIGTERM: () => stop('SIGTERM') };
    const detach = () => {
      for (const signal of SIGNALS) process.off(signal, handlers[signal]);
    };
    for (const signal of SIGNALS) process.on(signal, handlers[signal]);
    started.then((listeners) => {
      // A stdio server belongs to the client that started it: when it goes, so does the gateway.
      if (listeners.stdio && !listeners.http) process.stdin.once('end', () => stop('stdin closed'));
    }, detach);
  });
}
