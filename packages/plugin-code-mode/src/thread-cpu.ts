import { closeSync, openSync, readSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * The calling thread's id as Linux numbers it (the `task` of
 * `/proc/thread-self`), or 0 where there is no such file (another system).
 */
export function ownThreadId(): number {
  try {
    const task = /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
    return task ? Number(task[1]) : 0;
  } catch {
    return 0;
  }
}

/** The nice value a script's worker drops to once the script has computed for `LOWER_AFTER_MS`. */
export const SCRIPT_THREAD_NICE = 10;

/**
 * CPU ms of its own code after which a script's worker thread runs below the
 * main thread, which answers every caller: a script that computes this long
 * takes from then on only the CPU time the main thread leaves. Shorter
 * scripts keep the main thread's priority, so a busy machine does not starve
 * them.
 */
export const LOWER_AFTER_MS = 250;

/**
 * Lowers thread `id` of this process to `SCRIPT_THREAD_NICE` (Linux sets the
 * nice value of one thread when given its id). Answers whether it did: not
 * on another system, without a thread id, or where it is not allowed. A
 * lowered thread cannot be raised again without privileges, so its worker is
 * not given another script.
 */
export function lowerThreadPriority(id: number): boolean {
  if (!(id > 0)) return false;
  try {
    setPriority(id, SCRIPT_THREAD_NICE);
    return true;
  } catch {
    return false;
  }
}

/**
 * The CPU time of one thread of this process, read from Linux's
 * `/proc/self/task/<id>/schedstat` (its first field: nanoseconds spent
 * running): time the thread ran, not time it waited to run, so a loaded
 * machine does not inflate it. The file stays open; each read is one `pread`.
 */
export class ThreadCpuClock {
  private readonly buffer = Buffer.alloc(64);

  private constructor(private fd: number | undefined) {}

  /** A clock of thread `id`, or undefined when its file cannot be opened. */
  static open(id: number): ThreadCpuClock | undefined {
    if (!(id > 0)) return undefined;
    try {
      return new ThreadCpuClock(openSync(`/proc/self/task/${id}/schedstat`, 'r'));
    } catch {
      return undefined;
    }
  }

  /** Milliseconds the thread has run since it started, or undefined once it is gone (or its file unreadable). */
  ms(): number | undefined {
    if (this.fd === undefined) return undefined;
    try {
      const length = readSync(this.fd, this.buffer, 0, this.buffer.length, 0);
      const end = this.buffer.indexOf(32);
      const ns = Number(this.buffer.toString('latin1', 0, end > 0 && end < length ? end : length));
      return Number.isFinite(ns) ? ns / 1e6 : undefined;
    } catch {
      this.close();
      return undefined;
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // Already closed with its thread.
    }
    this.fd = undefined;
  }
}
