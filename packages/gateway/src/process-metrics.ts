import type { Registry } from 'prom-client';

let registry: Promise<Registry> | undefined;

/**
 * The process's own metrics, from prom-client's default collectors: resident
 * memory, heap (by space), event-loop lag, GC pauses (by kind), open file
 * descriptors, CPU time, handles and the Node version. Their labels are
 * bounded by Node itself (heap spaces, GC kinds). One registry per process,
 * made on the first scrape: the numbers are the process's, however many
 * gateways it holds, and the collectors' observers are started only once.
 * prom-client is loaded then too, not at start: a gateway that is never
 * scraped (one serving stdio, for instance) starts 20-50 ms of CPU sooner.
 */
export function processMetrics(): Promise<string> {
  registry ??= import('prom-client').then(({ Registry, collectDefaultMetrics }) => {
    const made = new Registry();
    collectDefaultMetrics({ register: made });
    return made;
  });
  return registry.then((made) => made.metrics());
}
