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
import type { FromWorker, ToWorker } from './worker-protocol.js';

interface Running {
  /** Calls waiting for the main thread's reply, by number. */
  readonly pending: Map<number, (text: string) => void>;
  readonly cancel: AbortController;
}

function serve(port: MessagePort): void {
  const engine = new Engine();
  let running: Running | undefined;
  const post = (message: FromWorker): void => {
    port.postMessage(message);
  };

  const run = async (message: Extract<ToWorker, { type: 'run' }>): Promise<void> => {
    const current: Running = { pending: new Map(), cancel: new AbortController() };
    running = current;
    let nextId = 0;
    try {
      const module = await engine.get();
      post({ type: 'started' });
      const outcome = await runScript(module, {
        source: message.source,
        layout: message.layout,
        limits: message.limits,
        signal: current.cancel.signal,
        host: {
          call: (tool, args) =>
            new Promise<string>((resolve) => {
              const id = nextId++;
              current.pending.set(id, resolve);
              post({ type: 'call', id, tool, args });
            }),
        },
        onFault: (error) => {
          engine.reset();
          post({ type: 'fault', message: error instanceof Error ? error.message : String(error) });
        },
      });
      post({ type: 'done', outcome });
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
      if (running === current) running = undefined;
    }
  };

  port.on('message', (message: ToWorker) => {
    switch (message.type) {
      case 'run':
        void run(message);
        break;
      case 'reply': {
        const resolve = running?.pending.get(message.id);
        running?.pending.delete(message.id);
        resolve?.(message.text);
        break;
      }
      case 'cancel':
        running?.cancel.abort();
        break;
    }
  });
}

if (parentPort) serve(parentPort);
