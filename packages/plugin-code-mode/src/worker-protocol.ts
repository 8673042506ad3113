import type { SandboxLimits } from './options.js';
import type { ScriptOutcome } from './sandbox.js';

/**
 * What the main thread sends a sandbox worker. The hot message, replies to
 * the script's calls, is a string (no object to clone): the number of
 * replies, a newline, then a JSON array of the replies, each the reply the
 * sandbox hands the script (`replyText()`) with the call's `id` first.
 */
export type ToWorker =
  | {
      readonly type: 'run';
      readonly source: string;
      readonly layout: Readonly<Record<string, Readonly<Record<string, string>>>>;
      readonly limits: SandboxLimits;
    }
  /** The caller cancelled the script. */
  | { readonly type: 'cancel' }
  | string;

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
