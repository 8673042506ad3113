import { closeSync, openSync, readSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

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

/**
 * How many nice levels below the main thread a script's worker runs once the
 * script's caller owes CPU (it has used its share and what it may run ahead
 * of it): from then on the script takes only the CPU time the main thread,
 * which answers every caller, leaves. A lowered thread is not starved (Linux
 * still gives it a share by its weight) and its time is charged to its caller
 * as before. Callers within their share, and a worker's start, keep the main
 * thread's priority, so a loaded machine does not hold them back.
 */
export const SCRIPT_NICE_STEP = 10;

/**
 * Lowers thread `id` of this process `SCRIPT_NICE_STEP` nice levels (at most
 * to 19): Linux sets the nice value of one thread when given its id. Answers
 * the nice value it had, to restore it, or undefined when it did not lower it:
 * on another system, without a thread id, where it is not allowed, or when the
 * thread is already at 19.
 */
export function lowerThreadPriority(id: number): number | undefined {
  if (!(id > 0)) return undefined;
  try {
    const was = getPriority(id);
    const lowered = Math.min(19, was + SCRIPT_NICE_STEP);
    if (lowered <= was) return undefined;
    setPriority(id, lowered);
    return was;
  } catch {
    return undefined;
  }
}

/**
 * Gives thread `id` back the nice value `nice` it had before it was lowered.
 * Raising a thread's priority needs a privilege (CAP_SYS_NICE, or an
 * RLIMIT_NICE that allows it) a gateway may not have: answers whether it was
 * allowed. A worker whose thread stays lowered is not given another script.
 */
export function restoreThreadPriority(id: number, nice: number): boolean {
  if (!(id > 0)) return false;
  try {
    setPriority(id, nice);
    return getPriority(id) === nice;
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
