import { closeSync, openSync, readSync, readlinkSync } from 'node:fs';

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
