import { getEventListeners, setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemoryStore } from '@sluice/core';
import type { Admission, Permit, Store } from '@sluice/core';

// The semaphore behind the guard, driven through the core's Store interface
// as the plugin drives it.

const admitted = (admission: Admission): Permit => {
  if (!admission.admitted) throw new Error('expected a permit');
  return admission.permit;
};

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the store semaphore', () => {
  it('admits waiters in strict FIFO order', async () => {
    const store: Store = new MemoryStore();
    const options = { maxActive: 1, maxQueue: 100 };
    const first = store.semaphore('fifo', options).tryAcquire()!;
    const order: number[] = [];
    const waiting = Array.from({ length: 50 }, (_, i) =>
      store
        .semaphore('fifo', options)
        .acquire()
        .then((a) => {
          order.push(i);
          admitted(a).release();
        }),
    );
    first.release();
    await Promise.all(waiting);
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('never lets more than maxActive hold a slot under random delays', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 30 }),
        async (maxActive, delays) => {
          const store: Store = new MemoryStore();
          const options = { maxActive, maxQueue: delays.length };
          let running = 0;
          let peak = 0;
          await Promise.all(
            delays.map(async (ms) => {
              const semaphore = store.semaphore('busy', options);
              const permit = semaphore.tryAcquire() ?? admitted(await semaphore.acquire());
              running++;
              peak = Math.max(peak, running);
              await tick(ms);
              running--;
              permit.release();
            }),
          );
          expect(peak).toBeLessThanOrEqual(maxActive);
          expect(peak).toBe(Math.min(maxActive, delays.length));
        },
      ),
      { numRuns: 25 },
    );
  });

  it('sheds exactly when every slot is held and the queue is full', async () => {
    const store: Store = new MemoryStore();
    const options = { maxActive: 2, maxQueue: 3 };
    const semaphore = store.semaphore('shed', options);
    const holders = [semaphore.tryAcquire(), semaphore.tryAcquire()];
    expect(holders.every((p) => p !== undefined)).toBe(true);
    expect(semaphore.tryAcquire()).toBeUndefined();
    const queued = [semaphore.acquire(), semaphore.acquire(), semaphore.acquire()];
    expect(semaphore.queued).toBe(3);
    expect(await semaphore.acquire()).toEqual({ admitted: false, active: 2, queued: 3 });
    holders[0]!.release();
    expect(semaphore.queued).toBe(2);
    const fourth = semaphore.acquire();
    expect(semaphore.queued).toBe(3);
    expect(await semaphore.acquire()).toEqual({ admitted: false, active: 2, queued: 3 });
    holders[1]!.release();
    for (const wait of [...queued, fourth]) admitted(await wait).release();
    expect(semaphore.active).toBe(0);
  });

  it('does not take a slot from a tryAcquire while others wait', async () => {
    const store: Store = new MemoryStore();
    const semaphore = store.semaphore('fair', { maxActive: 1, maxQueue: 5 });
    const holder = semaphore.tryAcquire()!;
    const waiter = semaphore.acquire();
    holder.release();
    // The slot went to the waiter, so the fast path must not jump the line.
    expect(semaphore.tryAcquire()).toBeUndefined();
    admitted(await waiter).release();
  });

  it('counts a release once, however often it is called', async () => {
    const store = new MemoryStore();
    const semaphore = store.semaphore('once', { maxActive: 1, maxQueue: 1 });
    const permit = semaphore.tryAcquire()!;
    const waiter = semaphore.acquire();
    permit.release();
    permit.release();
    const second = admitted(await waiter);
    expect(semaphore.active).toBe(1);
    second.release();
    second.release();
    expect(semaphore.active).toBe(0);
    expect(semaphore.tryAcquire()).toBeDefined();
  });

  it('drops 10,000 aborted waiters at once, with no stack overflow and no listener left', async () => {
    const store = new MemoryStore();
    const semaphore = store.semaphore('abort', { maxActive: 1, maxQueue: 20_000 });
    const holder = semaphore.tryAcquire()!;
    const shared = new AbortController();
    setMaxListeners(10_000, shared.signal);
    const own = Array.from({ length: 5_000 }, () => new AbortController());
    const waits = [
      ...Array.from({ length: 5_000 }, () => semaphore.acquire(shared.signal)),
      ...own.map((c) => semaphore.acquire(c.signal)),
    ];
    expect(semaphore.queued).toBe(10_000);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(5_000);
    shared.abort(new Error('stop'));
    for (const c of own) c.abort(new Error('stop'));
    expect(semaphore.queued).toBe(0);
    const outcomes = await Promise.allSettled(waits);
    expect(outcomes.every((o) => o.status === 'rejected' && (o.reason as Error).message === 'stop')).toBe(true);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(own.every((c) => getEventListeners(c.signal, 'abort').length === 0)).toBe(true);
    holder.release();
    expect(semaphore.active).toBe(0);
  });

  it('removes the listener of a waiter that got its slot', async () => {
    const store = new MemoryStore();
    const semaphore = store.semaphore('listener', { maxActive: 1, maxQueue: 1 });
    const holder = semaphore.tryAcquire()!;
    const controller = new AbortController();
    const waiter = semaphore.acquire(controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    holder.release();
    const permit = admitted(await waiter);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    controller.abort();
    permit.release();
    expect(semaphore.active).toBe(0);
  });

  it('removes a waiter from the middle of the line and keeps the others in order', async () => {
    const store = new MemoryStore();
    const semaphore = store.semaphore('middle', { maxActive: 1, maxQueue: 10 });
    const holder = semaphore.tryAcquire()!;
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    const order: number[] = [];
    const waits = controllers.map((c, i) =>
      semaphore.acquire(c.signal).then(
        (a) => {
          order.push(i);
          admitted(a).release();
        },
        () => undefined,
      ),
    );
    controllers[2]!.abort();
    controllers[0]!.abort();
    controllers[4]!.abort();
    expect(semaphore.queued).toBe(2);
    holder.release();
    await Promise.all(waits);
    expect(order).toEqual([1, 3]);
  });

  it('refuses at once when the signal has already fired, and does not keep the semaphore it made for it', async () => {
    const store = new MemoryStore();
    const reason = new Error('already gone');
    const signal = AbortSignal.abort(reason);
    for (let i = 0; i < 1_000; i++) {
      await expect(store.semaphore(`pre/${i}`, { maxActive: 1, maxQueue: 1 }).acquire(signal)).rejects.toBe(reason);
    }
    expect(store.semaphoreCount).toBeLessThanOrEqual(64);
  });

  it('collects idle semaphores of keys used once, keeping only a few for reuse, and never one in use', async () => {
    const store = new MemoryStore();
    const options = { maxActive: 1, maxQueue: 1 };
    const busy = store.semaphore('busy', options);
    const held = busy.tryAcquire()!;
    for (let i = 0; i < 1_000; i++) store.semaphore(`once/${i}`, options).tryAcquire()!.release();
    expect(store.semaphoreCount).toBeLessThanOrEqual(65);
    expect(store.semaphore('busy', options)).toBe(busy);
    expect(busy.tryAcquire()).toBeUndefined();
    held.release();
    for (let i = 0; i < 1_000; i++) store.semaphore(`again/${i}`, options).tryAcquire()!.release();
    expect(store.semaphoreCount).toBeLessThanOrEqual(64);
    expect(store.semaphore('busy', options)).not.toBe(busy);
    for (let i = 0; i < 1_000; i++) expect(store.semaphore(`looked-at/${i}`, options).active).toBe(0);
    expect(store.semaphoreCount).toBeLessThanOrEqual(64);
  });

  it('drains 100,000 waiters in order without recursion', async () => {
    const store = new MemoryStore();
    const semaphore = store.semaphore('drain', { maxActive: 1, maxQueue: 100_000 });
    const holder = semaphore.tryAcquire()!;
    let next = 0;
    let inOrder = true;
    const waits = Array.from({ length: 100_000 }, (_, i) =>
      semaphore.acquire().then((a) => {
        inOrder &&= i === next++;
        admitted(a).release();
      }),
    );
    holder.release();
    await Promise.all(waits);
    expect(next).toBe(100_000);
    expect(inOrder).toBe(true);
    expect(semaphore.active).toBe(0);
  });

  it('gives the lock of one key to one holder at a time, with increasing fencing tokens', async () => {
    const store: Store = new MemoryStore();
    const fences: number[] = [];
    let holders = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        const lock = store.lock('key');
        const permit = lock.tryAcquire() ?? admitted(await lock.acquire());
        holders++;
        peak = Math.max(peak, holders);
        fences.push(permit.fence);
        await tick(0);
        holders--;
        permit.release();
      }),
    );
    expect(peak).toBe(1);
    expect(fences).toEqual([...fences].sort((a, b) => a - b));
    expect(new Set(fences).size).toBe(20);
  });
});
