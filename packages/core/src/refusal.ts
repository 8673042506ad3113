import type { CallToolResult } from './protocol.js';
import { MetaKey } from './meta.js';

/** What a policy refusal tells the model, and the machine-readable copy. */
export interface RefusalInit {
  /** A code from the refusing plugin's list, e.g. `SERVER_BUSY`. */
  readonly code: string;
  /** What happened, in a sentence the model can act on. */
  readonly message: string;
  /** What to do next. */
  readonly suggestion?: string;
  /** When a retry may succeed. */
  readonly retryAfterMs?: number;
  /** Further machine-readable fields, copied into `_meta["dev.sluice/error"]`. */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** The machine-readable copy of a refusal, under `_meta["dev.sluice/error"]`. */
export interface RefusalMeta {
  readonly code: string;
  /**
   * Who refused: the plugin whose tap or wrapper returned the refusal, or
   * `core`. Set by the core, so that codes two plugins share stay apart.
   */
  readonly plugin?: string;
  readonly message: string;
  readonly retryAfterMs?: number;
  readonly [field: string]: unknown;
}

// `&` and `<` are all that XML text needs escaped; leaving `>` alone keeps arrows such as `a -> b` readable.
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;' };
const escapeXml = (text: string): string => text.replace(/[&<]/g, (c) => ESCAPES[c] ?? c);

/** Marks results built by `refusal()`, so the pipeline can report them as refusals; not serialized. */
const REFUSAL = Symbol.for('dev.sluice/refusal');

/** Renders the `<tool_error>` block a model reads. */
export function toolErrorText(code: string, message: string, suggestion?: string): string {
  const lines = [
    '<tool_error>',
    `  <error_code>${escapeXml(code)}</error_code>`,
    `  <message>${escapeXml(message)}</message>`,
  ];
  if (suggestion) lines.push(`  <suggestion>${escapeXml(suggestion)}</suggestion>`);
  lines.push('</tool_error>');
  return lines.join('\n');
}

/**
 * A refusal by policy: an `isError` result the model can read and recover
 * from, in the `<tool_error>` shape, with a machine-readable copy in
 * `_meta["dev.sluice/error"]`.
 */
export function refusal(init: RefusalInit): CallToolResult {
  const result = toolError(init);
  Object.defineProperty(result, REFUSAL, { value: true });
  return result;
}

/**
 * The same shape for a tool's own failure (its handler threw): readable by
 * the model, but not a refusal by policy.
 */
export function toolError(init: RefusalInit): CallToolResult {
  const meta: Record<string, unknown> = { ...init.details, code: init.code, message: init.message };
  if (init.retryAfterMs !== undefined) meta.retryAfterMs = init.retryAfterMs;
  return {
    content: [{ type: 'text', text: toolErrorText(init.code, init.message, init.suggestion) }],
    isError: true,
    _meta: { [MetaKey.ERROR]: meta },
  };
}

/** Whether this result object was built by `refusal()` in this process. */
export function isRefusal(result: CallToolResult): boolean {
  return (result as { [REFUSAL]?: boolean })[REFUSAL] === true;
}

/**
 * Names the plugin that refused in `_meta["dev.sluice/error"].plugin`, on a
 * copy. Anything that is not a refusal, or one already attributed (an inner
 * plugin's refusal passing through an outer one), comes back as it is.
 */
export function attributeRefusal(result: CallToolResult, plugin: string): CallToolResult;
export function attributeRefusal(result: unknown, plugin: string): unknown;
export function attributeRefusal(result: unknown, plugin: string): unknown {
  if (typeof result !== 'object' || result === null || !isRefusal(result as CallToolResult)) return result;
  const refused = result as CallToolResult;
  const meta = refused._meta?.[MetaKey.ERROR] as Record<string, unknown> | undefined;
  if (meta === undefined || meta.plugin !== undefined) return result;
  const copy: CallToolResult = { ...refused, _meta: { ...refused._meta, [MetaKey.ERROR]: { ...meta, plugin } } };
  Object.defineProperty(copy, REFUSAL, { value: true });
  return copy;
}

/** Reads the machine-readable refusal from a result, if it is one. */
export function readRefusal(result: CallToolResult | undefined): RefusalMeta | undefined {
  const value = result?._meta?.[MetaKey.ERROR];
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' ? (value as RefusalMeta) : undefined;
}
