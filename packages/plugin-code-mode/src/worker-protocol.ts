import type { SandboxLimits } from './options.js';
import type { ScriptOutcome } from './sandbox.js';

/** What the main thread sends a sandbox worker. */
export type ToWorker =
  | {
      readonly type: 'run';
      readonly source: string;
      readonly layout: Readonly<Record<string, Readonly<Record<string, string>>>>;
      readonly limits: SandboxLimits;
    }
  /** The reply to the script's call `id`, as the JSON text the sandbox hands the script. */
  | { readonly type: 'reply'; readonly id: number; readonly text: string }
  /** The caller cancelled the script. */
  | { readonly type: 'cancel' };

/** What a sandbox worker sends the main thread. */
export type FromWorker =
  /** The script calls a tool: the main thread runs it through the pipeline and replies with the same `id`. */
  | { readonly type: 'call'; readonly id: number; readonly tool: string; readonly args: Record<string, unknown> }
  /** The sandbox is ready and the script starts now: its CPU time counts from here. */
  | { readonly type: 'started' }
  /** The script ended; the worker is free for the next one. */
  | { readonly type: 'done'; readonly outcome: ScriptOutcome }
  /** The WebAssembly module faulted and was dropped; the worker compiles a fresh one for its next script. */
  | { readonly type: 'fault'; readonly message: string };
