// The entry of a sandbox worker thread: it runs one script at a time in its
// own QuickJS module and asks the main thread to run each tool call the script
// makes, so that every call goes through the main thread's pipeline. A worker
// that overruns its limits inside a builtin is terminated by the main thread
// (see pool.ts); nothing here needs to be trusted to stop.
import { parentPort, receiveMessageOnPort } from 'node:worker_threads';
// Imported, not the global: the global is a lazy getter, and the hot paths read the clock several times a call.
import { performance } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';
import { Engine } from './engine.js';
import { ownThreadId } from './thread-cpu.js';
import { CodeModeErrorCode } from './errors.js';
import { runScript } from './sandbox.js';
import type { ScriptRun } from './sandbox.js';
import { AwakeWaits, Control, POLL_MS, SPIN_AFTER_SLEEP_MS, SPIN_MS } from './worker-protocol.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

// Read once: the worker may run from source through a CommonJS transform, where each `Control.X` is a getter call.
const { REPLIES, CANCEL, CALLS, SLEEPING, WAITED, WAITING_SINCE, MAIN_WORK, WORKER_WORK, THROTTLE_UNTIL, THREAD_ID } =
  Control;
/** The longest one wait of a script slowed to its caller's CPU share; it then checks its limits again. */
const PAUSE_MS = 100;

/** The replies port and control block a worker shares with the main thread (see `Control`). */
interface Link {
  readonly replies: MessagePort;
  readonly flags: Int32Array;
  readonly times: Float64Array;
}

function serve(port: MessagePort): void {
  const engine = new Engine();
  let link: Link | undefined;
  let cancelled: AbortController | undefined;
  // Everything goes on the replies port, in order, where the main thread can also take it without its event loop.
  const post = (message: FromWorker): void => {
    if (!link) throw new Error('A sandbox worker asked to run a script before it was given its control block.');
    link.replies.postMessage(message);
    Atomics.add(link.flags, CALLS, 1);
  };

  const run = async (message: Extract<ToWorker, { type: 'run' }>): Promise<void> => {
    const cancel = new AbortController();
    cancelled = cancel;
    // Replies the last script did not take (it ended first, cancelled) must not answer this one's calls:
    // the main thread posted them before this run, so they are all queued now.
    if (link) while (receiveMessageOnPort(link.replies) !== undefined);
    try {
      const module = await engine.get(message.limits.memoryBytes);
      const shared = link;
      post({ type: 'started' });
      const current = runScript(module, {
        source: message.source,
        layout: message.layout,
        limits: message.limits,
        signal: cancel.signal,
        host: { send: post },
        ...(shared ? { pause: () => pause(shared, cancel) } : {}),
        onFault: (error) => {
          engine.reset();
          post({ type: 'fault', message: error instanceof Error ? error.message : String(error) });
        },
      });
      if (link) waitForReplies(current, link, cancel);
      post({ type: 'done', outcome: await current.done });
    } catch (error) {
      // A fault inside the WebAssembly module (not a script error): the next script gets a fresh module.
      engine.reset();
      post({ type: 'fault', message: error instanceof Error ? error.message : String(error) });
      post({
        type: 'done',
        outcome: {
          ok: false,
          code: CodeModeErrorCode.SCRIPT_ERROR,
          message: 'The sandbox failed while running the script.',
          logs: [],
          cpuMs: 0,
        },
      });
    } finally {
      if (cancelled === cancel) cancelled = undefined;
    }
  };

  port.on('message', (message: ToWorker) => {
    switch (message.type) {
      case 'init':
        link = {
          replies: message.replies,
          flags: new Int32Array(message.control),
          times: new Float64Array(message.control),
        };
        link.times[THREAD_ID] = ownThreadId();
        break;
      case 'run':
        void run(message);
        break;
      case 'cancel':
        cancelled?.abort();
        break;
    }
  });
}

/**
 * Runs a script to its end without the event loop: hands it the replies as
 * they come on the replies port, and between them blocks in `Atomics.wait`
 * (a thread waking from it costs less than one woken by a message), up to the
 * script's wall time, or until the main thread says the caller cancelled.
 * When the main thread answered the last calls within `SPIN_MS`, the worker
 * first checks for the replies awake for up to that long, so that a fast
 * tool's reply needs no wake-up at all; that time counts as waiting too.
 */
function waitForReplies(run: ScriptRun, link: Link, cancel: AbortController): void {
  const { replies, flags, times } = link;
  // Whether the last wait ended asleep: the main thread, done polling, then hears the next calls late.
  let slept = false;
  const awake = new AwakeWaits();
  for (;;) {
    run.flushLocal();
    if (run.isFinished()) return;
    if (Atomics.load(flags, CANCEL) === 1) {
      cancel.abort();
      return;
    }
    // Read before draining: a reply posted after the drain has changed it, and the wait returns at once.
    const seen = Atomics.load(flags, REPLIES);
    let received = receiveMessageOnPort(replies);
    if (received !== undefined) {
      const began = performance.now();
      while (received !== undefined && !run.isFinished()) {
        const text = received.message as string;
        const cut = text.indexOf('\n');
        run.deliver(text.slice(cut + 1), Number(text.slice(0, cut)));
        received = receiveMessageOnPort(replies);
      }
      times[WORKER_WORK] = performance.now() - began;
    }
    if (run.isFinished()) return;
    if (run.isStalled()) {
      run.stall();
      return;
    }
    if (!run.hasLocalReplies()) {
      const left = run.msLeft();
      if (left <= 0) {
        run.expire();
        return;
      }
      const began = performance.timeOrigin + performance.now();
      times[WAITING_SINCE] = began;
      const spinFor: number = awake.shouldTry() ? Math.min(left, spinMs(times, slept)) : 0;
      slept = !spin(link, seen, spinFor);
      if (spinFor > 0) {
        if (slept) awake.miss();
        else awake.hit();
      }
      if (slept) {
        // Said before the wait compares: a reply bumped after this store is notified, one before it is seen.
        Atomics.store(flags, SLEEPING, 1);
        Atomics.wait(flags, REPLIES, seen, left - (performance.timeOrigin + performance.now() - began));
        Atomics.store(flags, SLEEPING, 0);
      }
      times[WAITED] = (times[WAITED] ?? 0) + performance.timeOrigin + performance.now() - began;
      times[WAITING_SINCE] = 0;
    }
  }
}

/**
 * Slows a running script to its caller's CPU share: while the main thread
 * says the caller owes CPU (`THROTTLE_UNTIL`), waits in `Atomics.wait`, at
 * most `PAUSE_MS` at a time, woken early by a reply or a cancellation. The
 * wait counts as waiting, not as the script's CPU time. Answers the ms waited.
 */
function pause(link: Link, cancel: AbortController): number {
  const { flags, times } = link;
  const until = times[THROTTLE_UNTIL] ?? 0;
  if (until === 0) return 0;
  const began = performance.timeOrigin + performance.now();
  if (until <= began) return 0;
  times[WAITING_SINCE] = began;
  const seen = Atomics.load(flags, REPLIES);
  Atomics.store(flags, SLEEPING, 1);
  Atomics.wait(flags, REPLIES, seen, Math.min(PAUSE_MS, until - began));
  Atomics.store(flags, SLEEPING, 0);
  const waited = performance.timeOrigin + performance.now() - began;
  times[WAITED] = (times[WAITED] ?? 0) + waited;
  times[WAITING_SINCE] = 0;
  if (Atomics.load(flags, CANCEL) === 1) cancel.abort();
  return waited;
}

/**
 * How long to wait for replies awake: `SPIN_MS` while the main thread answers
 * within it and, as the worker answered within `POLL_MS`, picks the calls up
 * without waiting for its event loop (else the reply comes later than a spin
 * would last); zero otherwise. After a wait that ended asleep, the main thread
 * has stopped polling and hears these calls through its event loop: the worker
 * waits awake for `SPIN_AFTER_SLEEP_MS` once, so that both are awake again.
 */
function spinMs(times: Float64Array, slept: boolean): number {
  if ((times[MAIN_WORK] ?? 0) > SPIN_MS || (times[WORKER_WORK] ?? 0) > POLL_MS) return 0;
  return slept ? SPIN_AFTER_SLEEP_MS : SPIN_MS;
}

/** Checks for up to `ms` whether `REPLIES` moved past `seen` (a reply, or cancellation); true when it did. */
function spin(link: Link, seen: number, ms: number): boolean {
  if (ms <= 0) return false;
  const until = performance.now() + ms;
  do {
    if (Atomics.load(link.flags, REPLIES) !== seen) return true;
  } while (performance.now() < until);
  return Atomics.load(link.flags, REPLIES) !== seen;
}

if (parentPort) serve(parentPort);
