import type { Admission, Permit, Semaphore, SemaphoreOptions } from './types.js';

const ONCE = Object.freeze({ once: true });

/**
 * A waiter in the queue. It is its own abort listener (`handleEvent`), so a
 * waiter costs one object, one promise and its resolver: no closures. It
 * keeps only `resolve` and rejects through it (see `abandon`): holding the
 * `reject` function as well would cost another function object per waiter.
 */
class Waiter {
  prev: Waiter | undefined = undefined;
  next: Waiter | undefined = undefined;
  resolve!: (admission: Admission | Promise<never>) => void;
  constructor(
    readonly owner: LocalSemaphore,
    readonly signal: AbortSignal | undefined,
  ) {}

  handleEvent(): void {
    this.owner.abandon(this);
  }
}

class LocalPermit implements Permit {
  private released = false;
  constructor(
    private readonly owner: LocalSemaphore,
    readonly fence: number,
  ) {}

  release(): void {
    if (this.released) return;
    this.released = true;
    this.owner.releaseOne();
  }
}

/** Source of fencing tokens: one counter per store keeps them increasing per key. */
export interface FenceSource {
  next(): number;
}

/**
 * An in-process counting semaphore. The queue is a doubly linked list: O(1)
 * to enqueue, to admit the head, and to remove an aborted waiter anywhere.
 */
export class LocalSemaphore implements Semaphore {
  active = 0;
  queued = 0;
  private head: Waiter | undefined;
  private tail: Waiter | undefined;

  constructor(
    private options: SemaphoreOptions,
    private readonly fences: FenceSource,
    private readonly onIdle: (semaphore: LocalSemaphore) => void = () => {},
  ) {}

  /** Later calls may change the limits; waiting calls keep their places. */
  configure(options: SemaphoreOptions): void {
    // The same options (a guard passes its frozen ones on every call) change nothing.
    if (options === this.options) return;
    this.options = options;
    this.drain();
  }

  tryAcquire(): Permit | undefined {
    if (this.active >= this.options.maxActive || this.queued > 0) return undefined;
    this.active++;
    return new LocalPermit(this, this.fences.next());
  }

  acquire(signal?: AbortSignal): Promise<Admission> {
    if (signal?.aborted) {
      // The store may have created this semaphore for this very call: let it go.
      if (this.active === 0 && this.queued === 0) this.onIdle(this);
      return Promise.reject(signal.reason as Error);
    }
    const permit = this.tryAcquire();
    if (permit) return Promise.resolve({ admitted: true, permit });
    if (this.queued >= this.options.maxQueue) {
      return Promise.resolve({ admitted: false, active: this.active, queued: this.queued });
    }
    const waiter = new Waiter(this, signal);
    const promise = new Promise<Admission>((resolve) => {
      waiter.resolve = resolve;
    });
    this.push(waiter);
    signal?.addEventListener('abort', waiter, ONCE);
    return promise;
  }

  releaseOne(): void {
    this.active--;
    if (this.head !== undefined) this.drain();
    if (this.active === 0 && this.queued === 0) this.onIdle(this);
  }

  /** An aborted waiter leaves the queue at once. */
  abandon(waiter: Waiter): void {
    if (!this.unlink(waiter)) return;
    // Resolving with a rejected promise rejects the waiter's promise.
    waiter.resolve(Promise.reject(waiter.signal?.reason as Error));
    if (this.active === 0 && this.queued === 0) this.onIdle(this);
  }

  private drain(): void {
    while (this.head !== undefined && this.active < this.options.maxActive) {
      const waiter = this.head;
      this.unlink(waiter);
      waiter.signal?.removeEventListener('abort', waiter);
      this.active++;
      waiter.resolve({ admitted: true, permit: new LocalPermit(this, this.fences.next()) });
    }
  }

  private push(waiter: Waiter): void {
    waiter.prev = this.tail;
    if (this.tail) this.tail.next = waiter;
    else this.head = waiter;
    this.tail = waiter;
    this.queued++;
  }

  private unlink(waiter: Waiter): boolean {
    const linked = waiter.prev !== undefined || this.head === waiter;
    if (!linked) return false;
    if (waiter.prev) waiter.prev.next = waiter.next;
    else this.head = waiter.next;
    if (waiter.next) waiter.next.prev = waiter.prev;
    else this.tail = waiter.prev;
    waiter.prev = waiter.next = undefined;
    this.queued--;
    return true;
  }
}
