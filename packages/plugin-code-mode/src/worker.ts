// The entry of a sandbox worker thread: it runs one script at a time in its
// own QuickJS module and asks the main thread to run each tool call the script
// makes, so that every call goes through the main thread's pipeline. A worker
// that overruns its limits inside a builtin is terminated by the main thread
// (see pool.ts); nothing here needs to be trusted to stop.
import { parentPort, receiveMessageOnPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { Engine } from './engine.js';
import { CodeModeErrorCode } from './errors.js';
import { runScript } from './sandbox.js';
import type { ScriptRun } from './sandbox.js';
import { Control } from './worker-protocol.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

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
  const post = (message: FromWorker): void => {
    port.postMessage(message);
  };

  const run = async (message: Extract<ToWorker, { type: 'run' }>): Promise<void> => {
    const cancel = new AbortController();
    cancelled = cancel;
    try {
      const module = await engine.get(message.limits.memoryBytes);
      post({ type: 'started' });
      const current = runScript(module, {
        source: message.source,
        layout: message.layout,
        limits: message.limits,
        signal: cancel.signal,
        host: { send: post },
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
 */
function waitForReplies(run: ScriptRun, link: Link, cancel: AbortController): void {
  const { replies, flags, times } = link;
  for (;;) {
    run.flushLocal();
    if (run.isFinished()) return;
    if (Atomics.load(flags, Control.CANCEL) === 1) {
      cancel.abort();
      return;
    }
    // Read before draining: a reply posted after the drain has changed it, and the wait returns at once.
    const seen = Atomics.load(flags, Control.REPLIES);
    let received = receiveMessageOnPort(replies);
    while (received !== undefined && !run.isFinished()) {
      const text = received.message as string;
      const cut = text.indexOf('\n');
      run.deliver(text.slice(cut + 1), Number(text.slice(0, cut)));
      received = receiveMessageOnPort(replies);
    }
    if (run.isFinished()) return;
    if (!run.hasLocalReplies()) {
      const left = run.msLeft();
      if (left <= 0) {
        run.expire();
        return;
      }
      const began = performance.timeOrigin + performance.now();
      times[Control.WAITING_SINCE] = began;
      Atomics.wait(flags, Control.REPLIES, seen, left);
      times[Control.WAITED] = (times[Control.WAITED] ?? 0) + performance.timeOrigin + performance.now() - began;
      times[Control.WAITING_SINCE] = 0;
    }
  }
}

if (parentPort) serve(parentPort);
