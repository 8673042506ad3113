import type { CallContext, CallToolResult, Semaphore, Store } from '@sluice/core';

/** A door the test opens: handlers wait at it. */
export interface Gate {
  readonly opened: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Waits, turn by turn of the event loop, until `condition` holds. Gives up after `turns`. */
export async function until(condition: () => boolean, turns = 20_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition never held');
}

/** Lets the event loop go round `count` times, so that every call that can start has started. */
export async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

export const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** Counts handlers running at once, and the most that ever did. */
export class Occupancy {
  running = 0;
  peak = 0;
  started = 0;
  readonly order: unknown[] = [];

  async during<T>(label: unknown, work: () => Promise<T>): Promise<T> {
    this.started++;
    this.order.push(label);
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    try {
      return await work();
    } finally {
      this.running--;
    }
  }
}

/** Resolves when the call's signal fires. */
export const aborted = (ctx: CallContext): Promise<void> =>
  new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));

/**
 * A tool's semaphore, read through the store key the README documents.
 * Asking with the tool's own limit changes nothing.
 */
export const slotsOf = (store: Store, tool: string, limit: { maxActive: number; maxQueue: number }): Semaphore =>
  store.semaphore(`sluice/concurrency/slots/${tool}`, limit);

/** The lock of one action: the tool name plus each key argument as `length:text`. */
export const lockOf = (store: Store, tool: string, ...values: string[]): Semaphore =>
  store.lock([`sluice/concurrency/lock/${tool}`, ...values.map((v) => `${v.length}:${v}`)].join('/'));

/** Nothing holds or waits for the semaphore. */
export const idle = (semaphore: Semaphore): boolean => semaphore.active === 0 && semaphore.queued === 0;
