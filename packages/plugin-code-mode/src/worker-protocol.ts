import type { MessagePort } from 'node:worker_threads';
import type { SandboxLimits } from './options.js';
import type { ScriptOutcome } from './sandbox.js';

/** What the main thread sends a sandbox worker on its own port (replies come on the replies port: see `Control`). */
export type ToWorker =
  /** First message: the port replies come on, and the control block shared with the main thread. */
  | { readonly type: 'init'; readonly replies: MessagePort; readonly control: SharedArrayBuffer }
  | {
      readonly type: 'run';
      readonly source: string;
      readonly layout: Readonly<Record<string, Readonly<Record<string, string>>>>;
      readonly limits: SandboxLimits;
    }
  /** The caller cancelled the script (heard when the worker is not waiting for replies; else see `Control.CANCEL`). */
  | { readonly type: 'cancel' };

/**
 * The control block a worker shares with the main thread. While its script
 * waits for replies the worker blocks in `Atomics.wait` on `REPLIES` instead
 * of returning to its event loop: the main thread posts replies (a string: the
 * number of replies, a newline, then a JSON array of the replies, each as
 * `replyText()` writes it with the call's `id` first) on the replies port, then
 * bumps `REPLIES` and wakes it. The worker publishes how long it waited, so
 * that the main thread does not count waiting as the script's CPU time.
 *
 * Each side also publishes how long it took, the last time, to answer the
 * other (the main thread: from a batch of calls to its replies; the worker:
 * from replies to its next calls), without the time either spent asleep. A
 * side whose peer answers fast waits for the answer awake for a bounded time
 * (`SPIN_MS`, `POLL_MS`) instead of going to sleep: waking a
 * sleeping thread costs more than the answer.
 */
export const Control = Object.freeze({
  BYTES: 64,
  /** Int32 index: bumped after each message on the replies port, and on cancellation. */
  REPLIES: 0,
  /** Int32 index: 1 once the caller cancelled the current script (reset by the main thread before each run). */
  CANCEL: 1,
  /** Int32 index: bumped by the worker after each message it posts on the replies port. */
  CALLS: 2,
  /** Int32 index: 1 while the worker sleeps in `Atomics.wait` (or is about to): only then does a reply need a notify. */
  SLEEPING: 3,
  /** Float64 index (of a Float64Array over the whole block): milliseconds the worker has spent waiting for replies. */
  WAITED: 2,
  /** Float64 index: when the worker's current wait began (ms since the epoch), or 0 when it is not waiting. */
  WAITING_SINCE: 3,
  /** Float64 index: ms the main thread took, the last time, from receiving calls to posting their replies. */
  MAIN_WORK: 4,
  /** Float64 index: ms the worker took, the last time, from receiving replies to being ready to wait again. */
  WORKER_WORK: 5,
  /**
   * Float64 index: until when (ms since the epoch) the script's caller owes CPU, set by the main thread: the
   * running script waits at its next interrupt check until then (see `pause` in worker.ts), or 0.
   */
  THROTTLE_UNTIL: 6,
  /** Float64 index: the worker thread's id on Linux (for its CPU time in /proc), written once it starts; 0 elsewhere. */
  THREAD_ID: 7,
});

/**
 * How long a worker waiting for replies checks for them awake before it
 * sleeps in `Atomics.wait`, when the main thread answered its last calls
 * faster than this. The time counts as waiting, not as the script's CPU time.
 */
export const SPIN_MS = 0.05;

/**
 * How long a worker waits for replies awake after its last wait ended asleep
 * (see `spinMs` in worker.ts): long enough for the main thread to wake up
 * through its event loop and answer, so that the two leave the state where
 * each hears the other only after a wake-up.
 */
export const SPIN_AFTER_SLEEP_MS = 0.25;

/**
 * How long the main thread, after posting a script's replies, checks for the
 * script's next calls without returning to its event loop, when the worker
 * answered its last replies faster than this (and at most `CHAIN_MS` in a row:
 * see pool.ts). Other clients wait for it: keep it small.
 */
export const POLL_MS = 0.05;

/**
 * What a sandbox worker sends the main thread. The hot message, calls of the
 * script, is a string: a JSON array of `[id, tool, arguments]`, the calls one
 * turn of the script made; the main thread runs each through the pipeline and
 * replies with the same ids.
 */
export type FromWorker =
  /** The sandbox is ready and the script starts now: its CPU time counts from here. */
  | { readonly type: 'started' }
  /** The script ended; the worker is free for the next one. */
  | { readonly type: 'done'; readonly outcome: ScriptOutcome }
  /** The WebAssembly module faulted and was dropped; the worker compiles a fresh one for its next script. */
  | { readonly type: 'fault'; readonly message: string }
  | string;

/**
 * Whether waiting awake pays, for one side of a worker's link: after three
 * waits in a row in which the answer did not come in time (a loaded machine
 * deschedules the other side; a script computes), the next ones are skipped,
 * 8 at first and twice as many after each further run of misses, up to 256;
 * one answer in time resets it. Waiting awake is then tried again.
 */
export class AwakeWaits {
  private misses = 0;
  private skipping = 0;
  private nextSkip = 8;

  /** Whether to wait awake this time. */
  shouldTry(): boolean {
    if (this.skipping === 0) return true;
    this.skipping--;
    return false;
  }

  /** The answer came while waiting awake. */
  hit(): void {
    this.misses = 0;
    this.nextSkip = 8;
  }

  /** The wait ended without the answer. */
  miss(): void {
    if (++this.misses < 3) return;
    this.misses = 0;
    this.skipping = this.nextSkip;
    this.nextSkip = Math.min(256, this.nextSkip * 2);
  }
}
