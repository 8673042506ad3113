import { SluiceError, messageOf, readRefusal } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import type { CallReply } from './sandbox.js';

/** Fields of a refusal copied onto the script's `ToolError` besides code and message. */
const MAX_DETAIL_KEYS = 16;

/**
 * What a tool's result becomes inside a script: its structured content when it
 * has some, else its text when every block is text, else its content blocks.
 * An error result becomes a `ToolError` carrying the code of
 * `_meta["dev.sluice/error"]` (a guard's refusal), or `TOOL_ERROR`.
 */
export function replyOf(result: CallToolResult): CallReply {
  if (result.isError) {
    const refusal = readRefusal(result);
    if (refusal) {
      const details: Record<string, unknown> = {};
      for (const key of Object.keys(refusal).slice(0, MAX_DETAIL_KEYS)) {
        if (key !== 'code' && key !== 'message' && key !== '__proto__') details[key] = refusal[key];
      }
      return { ok: false, code: refusal.code, message: refusal.message, details };
    }
    return { ok: false, code: 'TOOL_ERROR', message: textOf(result) || 'The tool failed without saying why.' };
  }
  if (result.structuredContent !== undefined) return { ok: true, value: result.structuredContent };
  const content = result.content;
  if (content.every((block) => block.type === 'text')) return { ok: true, value: textOf(result) };
  return { ok: true, value: content };
}

/** A call that failed outside any result (unknown tool, malformed input, a plugin's bug, cancellation). */
export function replyOfError(error: unknown): CallReply {
  if (!SluiceError.is(error)) return { ok: false, code: 'CALL_FAILED', message: messageOf(error).slice(0, 500) };
  // A plugin's own message may hold secrets: the script learns only which plugin failed, as a client would.
  if (error.code === 'PLUGIN_FAILED') {
    return { ok: false, code: error.code, message: `The plugin "${error.plugin ?? 'unknown'}" failed on this call.` };
  }
  return { ok: false, code: error.code, message: error.message.slice(0, 500) };
}

function textOf(result: CallToolResult): string {
  return result.content
    .map((block) => (block.type === 'text' ? block.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}
