import { z } from 'zod/v4';
import type { CallContext } from './context.js';
import { CoreErrorCode, SluiceError } from './errors.js';
import type { InputRequiredResult } from '@modelcontextprotocol/server';
import type { CallToolResult, Tool, ToolAnnotations } from './protocol.js';
import type { InferArgs, SchemaInput } from './schema.js';

/**
 * Per-tool settings for plugins. Empty in core: each plugin adds its own
 * field by module augmentation, e.g.
 *
 * ```ts
 * declare module '@sluice/core' {
 *   interface ToolPolicy { concurrency?: { maxActive: number; maxQueue?: number } }
 * }
 * ```
 */
export interface ToolPolicy {
  /**
   * Whether calls to this tool change state irreversibly, whatever its
   * annotations say. Shared by plugins that care (the concurrency guard's
   * intent mutex, the risk engine), so it is declared once, here.
   */
  destructive?: boolean;
}

/**
 * What an upstream's connection is, without its secrets: header names but
 * never their values, no environment, and a URL without credentials or
 * query. For plugins that judge an upstream (transport, host, auth).
 */
export interface ConnectionSummary {
  readonly type: 'stdio' | 'http' | 'sse' | 'in-process';
  /** http and sse: origin and path only. */
  readonly url?: string;
  /** stdio: the command and its arguments (keep secrets in `env`, which is never shown). */
  readonly command?: string;
  readonly args?: readonly string[];
  /** http and sse: the names of the configured request headers, lower case. */
  readonly headerNames?: readonly string[];
}

/** Where a tool comes from. */
export type ToolSource =
  | { readonly kind: 'local' }
  | {
      readonly kind: 'upstream';
      /** The upstream's configured name (never the name it reports about itself). */
      readonly upstream: string;
      /** The tool's name at the upstream, before any namespace or rename. */
      readonly originalName: string;
      /** The operator marked this upstream as trusted: its annotations may be believed. */
      readonly trusted: boolean;
      readonly connection?: ConnectionSummary;
    }
  | { readonly kind: 'adopted' };

/** Where a batch of tools comes from: a `ToolSource` without the per-tool name. */
export type ImportSource =
  | { readonly kind: 'local' }
  | {
      readonly kind: 'upstream';
      readonly upstream: string;
      readonly trusted: boolean;
      readonly connection?: ConnectionSummary;
    }
  | { readonly kind: 'adopted' };

/**
 * A tool as the pipeline sees it. Mutable while the `import` hook runs
 * (rename it, annotate its definition, set its policy); frozen afterwards.
 */
export interface SluiceTool {
  /** The name clients see and call. */
  name: string;
  /** The definition `tools/list` shows; its `name` follows `name`. */
  definition: Tool;
  policy: ToolPolicy;
  readonly source: ToolSource;
  /**
   * For imported tools: the most bytes the proxy reads from the upstream for
   * one call before it stops reading and fails the call, so a huge upstream
   * body is never buffered whole. Plugins set it during `import` (the egress
   * guard sets a multiple of its limit). Absent: no cap.
   */
  responseLimitBytes?: number;
}

/** A tool that the import hook kept out, and why. */
export interface SkippedTool {
  readonly name: string;
  readonly reason: string;
  /** The plugin that skipped it, or `core`. */
  readonly by: string;
}

/** What the `import` hook threads through its taps. */
export interface ImportBatch {
  /** Where the tools of this batch come from; each tool's own `source` names it exactly. */
  readonly source: ImportSource;
  /** The tools still in the batch. */
  readonly tools: SluiceTool[];
  readonly skipped: SkippedTool[];
  /** Removes a tool from the batch and records why. */
  skip(tool: SluiceTool | string, reason: string, by: string): void;
}

export function createImportBatch(source: ImportSource, tools: SluiceTool[]): ImportBatch {
  const batch: ImportBatch = {
    source,
    tools,
    skipped: [],
    skip(tool, reason, by) {
      const name = typeof tool === 'string' ? tool : tool.name;
      const index = batch.tools.findIndex((t) => t.name === name);
      if (index === -1) return;
      batch.tools.splice(index, 1);
      batch.skipped.push({ name, reason, by });
    },
  };
  return batch;
}

/** The annotations of a tool, or none. Hints only: the spec calls them untrusted. */
export function annotationsOf(tool: SluiceTool): ToolAnnotations {
  return tool.definition.annotations ?? {};
}

/**
 * A local tool's handler. On 2026-07-28 it may return the SDK's
 * `inputRequired(...)` result to ask the client for input; the client
 * retries the call with the answers (`ctx.mcp.mcpReq.inputResponses`).
 */
export type ToolHandler<Args> = (
  args: Args,
  ctx: CallContext,
) => CallToolResult | InputRequiredResult | Promise<CallToolResult | InputRequiredResult>;

/** A local tool, as given to `server.tool()`. */
export interface ToolDefinition<In extends SchemaInput | undefined = SchemaInput | undefined> {
  name: string;
  title?: string;
  description?: string;
  /** zod (or any Standard Schema with JSON Schema), or a JSON Schema object. */
  inputSchema?: In;
  outputSchema?: SchemaInput;
  annotations?: ToolAnnotations;
  _meta?: Record<string, unknown>;
  /** Settings for plugins (see `ToolPolicy`). */
  policy?: ToolPolicy;
  handler: ToolHandler<In extends SchemaInput ? InferArgs<In> : Record<string, unknown>>;
}

/** Names the MCP specification allows: 1-128 of letters, digits, `_`, `-`, `.`. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A tool name in options (an alias, say): what `isToolName()` accepts, with the same message. */
export const ToolNameSchema = z.string().regex(TOOL_NAME, 'use 1-128 letters, digits, "_", "-" or "."');

/** Whether a value is a name the MCP specification allows for a tool. */
export function isToolName(name: unknown): boolean {
  return typeof name === 'string' && TOOL_NAME.test(name);
}

export function assertToolName(name: unknown, what = 'Tool name'): asserts name is string {
  if (typeof name !== 'string' || !isToolName(name)) {
    throw new SluiceError(
      CoreErrorCode.INVALID_TOOL,
      `${what} ${JSON.stringify(name)} is invalid: use 1-128 letters, digits, "_", "-" or "."`,
    );
  }
}
