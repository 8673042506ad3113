import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { EventLoopUtilization } from 'node:perf_hooks';
// Imported, not the global: the global is a lazy getter, and the hot paths read the clock several times a call.
import { performance } from 'node:perf_hooks';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { CodeModeErrorCode } from './errors.js';
import type { SandboxLimits } from './options.js';
import type { CallReply, ScriptOutcome } from './sandbox.js';
import { replyText } from './sandbox.js';
import { ThreadCpuClock, lowerThreadPriority, restoreThreadPriority } from './thread-cpu.js';
import { AwakeWaits, Control, POLL_MS } from './worker-protocol.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

/** A script to run in a worker, with what the main thread does for it. */
export interface PoolScript {
  readonly source: string;
  readonly layout: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly limits: SandboxLimits;
  /** The caller's cancellation. */
  readonly signal: AbortSignal;
  /**
   * Runs one tool call of the script through the pipeline; never rejects. `signal` aborts when the script ends;
   * `id` numbers the script's calls in the order it made them.
   */
  readonly call: (tool: string, args: Record<string, unknown>, signal: AbortSignal, id: number) => Promise<CallReply>;
  /** The worker's WebAssembly module faulted; its next script runs on a fresh one. */
  readonly onFault: (message: string) => void;
  /**
   * Charges the script's caller `ms` of CPU the script cost since the last charge (its worker thread's, and the
   * main thread's while it served the script); answers the wall ms the caller now owes (0: nothing).
   */
  readonly charge: (ms: number) => number;
}

/**
 * How long past its own limit a worker may take to stop itself before the
 * main thread terminates it: the worker's checks run between bytecode
 * operations, and a builtin (a sort, a regular expression, a copy of a large
 * string) can hold it between two checks for much longer.
 */
export const OVERRUN_GRACE_MS = 250;
/** How long a new worker may take to start (Node, then compiling the module) before its script is stopped. */
const BOOT_MS = 10_000;
/** The one idle worker kept warm (with the module memory it holds) is ended after this long unused. */
const IDLE_MS = 30_000;
/**
 * Idle workers beyond that one are ended after this long unused, and with
 * them the memory their scripts touched (a module's memory, up to the heap
 * limit plus its headroom, is never given back while the worker lives).
 */
const SPARE_IDLE_MS = 1_000;
/**
 * The longest the main thread runs scripts' calls it picked up by polling
 * (see `POLL_MS`) before it lets its event loop turn: other clients' requests
 * and timers wait at most this long (plus one tool call) for a script.
 */
export const CHAIN_MS = 1;
/**
 * A running script is held back while its caller owes more than this (in ms
 * of wall time at its share), down to it: its caller's new scripts are
 * refused from the first ms owed, so a caller whose long script keeps it in
 * debt starts no other while it runs, and the script is not stopped at every
 * check for the last ms.
 */
export const HOLD_BACK_AFTER_MS = 250;

// The worker entry beside this file: `worker.js` in both builds; `worker.ts` when the
// monorepo runs from source, loaded through the TypeScript loader its own scripts use.
// `import.meta.url` is read first: imported from `node -e`, the ESM build sees a global
// `__filename` ("[eval]") that names no file; the CommonJS build has an empty `import.meta`.
const metaUrl = (import.meta as { url?: string }).url;
const here: string = typeof metaUrl === 'string' && metaUrl !== '' ? metaUrl : pathToFileURL(__filename).href;
// Loading the worker's sources through tsx costs some 0.4 s of CPU a worker (0.1 s for the build): with
// SLUICE_TEST_WORKER=dist (set by `pnpm test` and CI after their build, as SLUICE_TEST_CLI is) a monorepo run from source starts the
// build of the same sources instead.
const builtWorker = here.endsWith('.ts') && process.env.SLUICE_TEST_WORKER === 'dist';
const fromSource = here.endsWith('.ts') && !builtWorker;
const WORKER_URL = new URL(fromSource ? './worker.ts' : builtWorker ? '../dist/worker.js' : './worker.js', here);

function startWorker(): Worker {
  if (!fromSource) return new Worker(WORKER_URL);
  const entry = JSON.stringify(fileURLToPath(WORKER_URL));
  const loader = JSON.stringify(createRequire(here).resolve('tsx/cjs/api'));
  return new Worker(`require(${loader}).require(${entry}, ${entry})`, { eval: true });
}

/**
 * Worker threads that run scripts, one script per worker at a time, at most
 * `size` at once. The main thread watches each one: a worker that runs past
 * its script's wall time or CPU time (measured as the time its event loop was
 * busy) by more than `OVERRUN_GRACE_MS` is terminated, and the script ends
 * with its limit's code. The main thread's event loop never runs a script, so
 * the server keeps serving while one runs.
 */
export class ScriptPool {
  private readonly idle: { worker: Worker; timer: ReturnType<typeof setTimeout> }[] = [];
  private readonly all = new Set<Worker>();
  private closed = false;

  run(script: PoolScript): Promise<ScriptOutcome> {
    if (this.closed) return Promise.resolve(ending(CodeModeErrorCode.CANCELLED, 'The server is closing.', 0));
    const setUpAt = performance.now();
    const { worker, fresh } = this.take();
    const link = linkOf(worker);
    return new Promise<ScriptOutcome>((resolve) => {
      // What the script cost since it was last charged to its caller: the main thread's time serving it, and
      // the worker's CPU time from this reading on (a new worker's from when it starts the script: starting
      // Node in a thread is the pool's cost, not the script's).
      let hostMs = 0;
      let cpuAt = fresh ? undefined : workerCpuMs(worker, link);
      const account = (): number => {
        const cpu = cpuAt === undefined ? undefined : workerCpuMs(worker, link);
        const owed = script.charge(
          cpu === undefined || cpuAt === undefined ? hostMs : Math.max(0, cpu - cpuAt) + hostMs,
        );
        if (cpu !== undefined) cpuAt = cpu;
        hostMs = 0;
        return owed;
      };
      const limits = script.limits;
      const signal = new AbortController();
      const requested = performance.now();
      // Set when the worker starts the script: its boot is not the script's time.
      let started: { at: number; busy: EventLoopUtilization; waited: number } | undefined;
      // The worker's event loop is busy while it waits for replies in Atomics.wait: that time is not the script's.
      const busyMs = () => {
        if (!started) return 0;
        const since = link.times[Control.WAITING_SINCE] ?? 0;
        const waiting = since > 0 ? performance.timeOrigin + performance.now() - since : 0;
        const waited = (link.times[Control.WAITED] ?? 0) - started.waited + waiting;
        return Math.max(0, worker.performance.eventLoopUtilization(started.busy).active - waited);
      };
      let cancelTimer: ReturnType<typeof setTimeout> | undefined;
      let ended = false;
      // The nice value the worker's thread had before it was lowered (see `lowerThreadPriority`), once it was.
      let loweredFrom: number | undefined;
      let lowerTried = false;

      const end = (outcome: ScriptOutcome, reusable: boolean) => {
        if (ended) return;
        ended = true;
        account();
        link.times[Control.THROTTLE_UNTIL] = 0;
        clearInterval(watchdog);
        clearTimeout(cancelTimer);
        script.signal.removeEventListener('abort', onAbort);
        link.onMessage = undefined;
        worker.off('error', onGone);
        worker.off('exit', onGone);
        signal.abort();
        // A lowered worker is given another script only once its thread has its priority back.
        const thread = link.times[Control.THREAD_ID] ?? 0;
        if (reusable && (loweredFrom === undefined || restoreThreadPriority(thread, loweredFrom))) this.release(worker);
        else this.discard(worker);
        resolve(outcome);
      };
      const stop = (code: CodeModeErrorCode, message: string) => end(ending(code, message, busyMs()), false);

      // Replies resolved in the same turn of the main thread go to the worker in one message.
      let replies: string[] = [];
      let flushing = false;
      let callsAt = 0;
      const flush = () => {
        flushing = false;
        if (ended || replies.length === 0) return;
        const at = performance.now();
        link.replies.postMessage(`${replies.length}\n[${replies.join(',')}]`);
        wake(link);
        replies = [];
        link.times[Control.MAIN_WORK] = performance.now() - callsAt;
        hostMs += performance.now() - at;
        // A script that answers fast sends its next calls within microseconds: take them now, without a wake-up.
        if ((link.times[Control.WORKER_WORK] ?? 0) <= POLL_MS) takeNext();
      };
      // Polls for the worker's next message; once the chain is long, lets the event loop turn first, then polls.
      let received = 0;
      const takeNext = (): void => {
        if (!chainAllows()) {
          const seen = received;
          setImmediate(() => {
            // Unless the event loop brought the message meanwhile.
            if (!ended && received === seen) takeNext();
          });
          return;
        }
        if (!link.polls.shouldTry()) return;
        const at = performance.now();
        const message = poll(link);
        hostMs += performance.now() - at;
        if (message === undefined) {
          link.polls.miss();
          return;
        }
        link.polls.hit();
        onMessage(message);
      };
      const reply = (id: number, answer: CallReply) => {
        if (ended) return;
        const at = performance.now();
        const text = replyText(answer, limits);
        replies.push(`{"id":${id},${text.slice(1)}`);
        hostMs += performance.now() - at;
        if (flushing) return;
        flushing = true;
        queueMicrotask(flush);
      };
      const onCalls = (batch: string) => {
        callsAt = performance.now();
        const calls = parseCalls(batch);
        if (!calls) {
          stop(CodeModeErrorCode.SCRIPT_ERROR, 'The sandbox failed while running the script.');
          return;
        }
        for (const [id, tool, args] of calls) {
          void script.call(tool, args, signal.signal, id).then((answer) => {
            reply(id, answer);
          });
        }
      };

      const onMessage = (message: FromWorker) => {
        received++;
        if (typeof message === 'string') {
          // Each call's way through the pipeline, up to where it waits, is the script's host time too.
          const at = performance.now();
          onCalls(message);
          hostMs += performance.now() - at;
          return;
        }
        switch (message.type) {
          case 'started':
            cpuAt ??= workerCpuMs(worker, link);
            started = {
              at: performance.now(),
              busy: worker.performance.eventLoopUtilization(),
              waited: link.times[Control.WAITED] ?? 0,
            };
            break;
          case 'done':
            end(message.outcome, true);
            break;
          case 'fault':
            script.onFault(message.message);
            break;
        }
      };
      const onGone = (error: unknown) => {
        // An exit code, or what the worker threw: worth a line in the log, never the script's answer.
        if (error instanceof Error) script.onFault(error.message);
        stop(CodeModeErrorCode.SCRIPT_ERROR, 'The sandbox failed while running the script.');
      };
      const onAbort = () => {
        send(worker, { type: 'cancel' });
        Atomics.store(link.flags, Control.CANCEL, 1);
        wake(link);
        // A worker held inside a builtin cannot hear it: end the script anyway, and the worker with it.
        cancelTimer = setTimeout(
          () => stop(CodeModeErrorCode.CANCELLED, 'The caller cancelled the script.'),
          OVERRUN_GRACE_MS,
        );
      };
      const watchdog = setInterval(
        () => {
          // A caller that owes CPU holds its running scripts back (see `pause` in worker.ts), and they run below the
          // main thread from then on (see `lowerThreadPriority`).
          const owed = account();
          link.times[Control.THROTTLE_UNTIL] = holdBackUntil(owed);
          // A new worker says which thread it is once it has booted: until then there is nothing to lower, and
          // the attempt waits for a later tick rather than being spent.
          const thread = link.times[Control.THREAD_ID] ?? 0;
          if (owed > 0 && !lowerTried && thread > 0) {
            lowerTried = true;
            loweredFrom = lowerThreadPriority(thread);
          }
          if (busyMs() > limits.cpuMs + OVERRUN_GRACE_MS) {
            stop(
              CodeModeErrorCode.CPU_LIMIT,
              `The script's own code ran past its ${limits.cpuMs} ms of CPU time (stopped inside a builtin).`,
            );
          } else if (
            started
              ? performance.now() - started.at > limits.timeoutMs + OVERRUN_GRACE_MS
              : performance.now() - requested > limits.timeoutMs + BOOT_MS
          ) {
            stop(CodeModeErrorCode.SCRIPT_TIMEOUT, `The script ran past its ${limits.timeoutMs} ms.`);
          }
        },
        Math.min(100, Math.max(10, Math.floor(limits.cpuMs / 10))),
      );
      watchdog.unref();

      link.onMessage = onMessage;
      worker.on('error', onGone);
      worker.on('exit', onGone);
      script.signal.addEventListener('abort', onAbort, { once: true });
      Atomics.store(link.flags, Control.CANCEL, 0);
      link.times[Control.MAIN_WORK] = 0;
      link.times[Control.WORKER_WORK] = 0;
      // Before the run: a caller that already owes CPU (its other script spent it) starts held back.
      link.times[Control.THROTTLE_UNTIL] = holdBackUntil(script.charge(performance.now() - setUpAt));
      send(worker, { type: 'run', source: script.source, layout: script.layout, limits });
      if (script.signal.aborted) onAbort();
    });
  }

  /** Terminates every worker; scripts still running end as cancelled. */
  async close(): Promise<void> {
    this.closed = true;
    for (const { timer } of this.idle.splice(0)) clearTimeout(timer);
    await Promise.all(
      [...this.all].map((worker) => {
        const link = links.get(worker);
        link?.replies.close();
        link?.cpu?.close();
        return worker.terminate();
      }),
    );
    this.all.clear();
  }

  /** An idle worker, or a new one (`fresh`). */
  private take(): { worker: Worker; fresh: boolean } {
    const reused = this.idle.pop();
    if (reused) {
      clearTimeout(reused.timer);
      reused.worker.ref();
      linkOf(reused.worker).replies.ref();
      return { worker: reused.worker, fresh: false };
    }
    const worker = startWorker();
    const channel = new MessageChannel();
    const control = new SharedArrayBuffer(Control.BYTES);
    const link: Link = {
      replies: channel.port1,
      flags: new Int32Array(control),
      times: new Float64Array(control),
      polls: new AwakeWaits(),
      onMessage: undefined,
      cpu: undefined,
    };
    links.set(worker, link);
    // What the worker sends while no poll takes it (see `poll`), to the script it runs now.
    channel.port1.on('message', (message: FromWorker) => link.onMessage?.(message));
    worker.postMessage({ type: 'init', replies: channel.port2, control } satisfies ToWorker, [channel.port2]);
    this.all.add(worker);
    // An error or exit while idle: forget the worker (a running script listens for itself).
    worker.on('error', () => this.discard(worker));
    worker.on('exit', () => this.discard(worker));
    return { worker, fresh: true };
  }

  private release(worker: Worker): void {
    if (this.closed) {
      this.discard(worker);
      return;
    }
    worker.unref();
    linkOf(worker).replies.unref();
    const timer = setTimeout(() => this.discard(worker), this.idle.length === 0 ? IDLE_MS : SPARE_IDLE_MS);
    timer.unref();
    this.idle.push({ worker, timer });
  }

  private discard(worker: Worker): void {
    const at = this.idle.findIndex((entry) => entry.worker === worker);
    if (at >= 0) clearTimeout(this.idle.splice(at, 1)[0]?.timer);
    if (this.all.delete(worker)) {
      const link = links.get(worker);
      link?.replies.close();
      link?.cpu?.close();
      void worker.terminate();
    }
  }
}

function send(worker: Worker, message: ToWorker): void {
  worker.postMessage(message);
}

/** The main thread's side of what a worker shares with it (see `Control`), and who hears its messages now. */
interface Link {
  /** Replies go out on it; everything the worker sends comes back on it. */
  readonly replies: MessagePort;
  readonly flags: Int32Array;
  readonly times: Float64Array;
  /** Whether polling for this worker's messages pays (see `AwakeWaits`). */
  readonly polls: AwakeWaits;
  onMessage: ((message: FromWorker) => void) | undefined;
  /** The worker thread's CPU clock, opened once the worker said which thread it is; null where it cannot be. */
  cpu: ThreadCpuClock | null | undefined;
}

const links = new WeakMap<Worker, Link>();

function linkOf(worker: Worker): Link {
  const link = links.get(worker);
  if (!link) throw new Error('A sandbox worker without its control block.');
  return link;
}

/** Until when (ms since the epoch) a script whose caller owes `owedMs` is held back, or 0. */
function holdBackUntil(owedMs: number): number {
  return owedMs > HOLD_BACK_AFTER_MS ? performance.timeOrigin + performance.now() + owedMs - HOLD_BACK_AFTER_MS : 0;
}

/**
 * The worker thread's CPU time so far, in ms: read from Linux where the
 * worker said which thread it is; elsewhere (or until then), the time its
 * event loop was busy, without its waits for replies and its pauses.
 */
function workerCpuMs(worker: Worker, link: Link): number {
  if (link.cpu === undefined) {
    const id = link.times[Control.THREAD_ID] ?? 0;
    if (id > 0) link.cpu = ThreadCpuClock.open(id) ?? null;
  }
  const ms = link.cpu?.ms();
  if (ms !== undefined) return ms;
  const since = link.times[Control.WAITING_SINCE] ?? 0;
  const waiting = since > 0 ? performance.timeOrigin + performance.now() - since : 0;
  return worker.performance.eventLoopUtilization().active - (link.times[Control.WAITED] ?? 0) - waiting;
}

/** Tells the worker replies (or a cancellation) came, and wakes it if it sleeps in Atomics.wait for them. */
function wake(link: Link): void {
  Atomics.add(link.flags, Control.REPLIES, 1);
  // A worker that checks awake sees the bump; a notify costs a lock and, to a sleeper, a system call.
  if (Atomics.load(link.flags, Control.SLEEPING) === 1) Atomics.notify(link.flags, Control.REPLIES);
}

/** When the main thread began running calls it polled for without its event loop turning since; 0 once it turned. */
let chainSince = 0;

/** Whether the main thread may poll now: it has not run polled calls for `CHAIN_MS` since its event loop last turned. */
function chainAllows(): boolean {
  if (chainSince === 0) {
    chainSince = performance.now();
    setImmediate(() => {
      chainSince = 0;
    });
    return true;
  }
  return performance.now() - chainSince <= CHAIN_MS;
}

/** The worker's next message if it comes within `POLL_MS`, taken without the event loop; else undefined. */
function poll(link: Link): FromWorker | undefined {
  const until = performance.now() + POLL_MS;
  for (;;) {
    // Read before taking: a message posted after the take has moved it.
    const seen = Atomics.load(link.flags, Control.CALLS);
    const received = receiveMessageOnPort(link.replies);
    if (received !== undefined) return received.message as FromWorker;
    while (Atomics.load(link.flags, Control.CALLS) === seen) {
      if (performance.now() >= until) return undefined;
    }
  }
}

type Call = readonly [id: number, tool: string, args: Record<string, unknown>];

/** The calls of a worker's message, or undefined when it is not what the sandbox writes. */
function parseCalls(batch: string): Call[] | undefined {
  let calls: unknown;
  try {
    calls = JSON.parse(batch);
  } catch {
    return undefined;
  }
  if (!Array.isArray(calls)) return undefined;
  for (const call of calls as unknown[]) {
    if (!Array.isArray(call) || call.length !== 3) return undefined;
    const [id, tool, args] = call as unknown[];
    if (typeof id !== 'number' || typeof tool !== 'string' || typeof args !== 'object' || args === null) {
      return undefined;
    }
    if (Array.isArray(args)) return undefined;
  }
  return calls as Call[];
}

function ending(code: CodeModeErrorCode, message: string, cpuMs: number): ScriptOutcome {
  return { ok: false, code, message, logs: [], cpuMs };
}
