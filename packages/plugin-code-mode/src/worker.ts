// The entry of a sandbox worker thread: it runs one script at a time in its
// own QuickJS module and asks the main thread to run each tool call the script
// makes, so that every call goes through the main thread's pipeline. A worker
// that overruns its limits inside a builtin is terminated by the main thread
// (see pool.ts); nothing here needs to be trusted to stop.
import { parentPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { Engine } from './engine.js';
import { CodeModeErrorCode } from './errors.js';
import { runScript } from './sandbox.js';
import type { ScriptRun } from './sandbox.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

function serve(port: MessagePort): void {
  const engine = new Engine();
  let running: ScriptRun | undefined;
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
      running = current;
      const outcome = await current.done;
      if (running === current) running = undefined;
      post({ type: 'done', outcome });
    } catch (error) {
      running = undefined;
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
    if (typeof message === 'string') {
      // Replies: their count, a newline, their JSON array.
      const cut = message.indexOf('\n');
      running?.deliver(message.slice(cut + 1), Number(message.slice(0, cut)));
      return;
    }
    switch (message.type) {
      case 'run':
        void run(message);
        break;
      case 'cancel':
        cancelled?.abort();
        break;
    }
  });
}

if (parentPort) serve(parentPort);
