import { Registry, collectDefaultMetrics } from 'prom-client';

let registry: Registry | undefined;

/**
 * The process's own metrics, from prom-client's default collectors: resident
 * memory, heap (by space), event-loop lag, GC pauses (by kind), open file
 * descriptors, CPU time, handles and the Node version. Their labels are
 * bounded by Node itself (heap spaces, GC kinds). One registry per process,
 * made on the first scrape: the numbers are the process's, however many
 * gateways it holds, and the collectors' observers are started only once.
 */
export function processMetrics(): Promise<string> {
  if (!registry) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry.metrics();
}
