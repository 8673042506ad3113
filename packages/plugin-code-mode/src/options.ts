import { z } from 'zod';
import { PluginModeSchema } from '@sluice/core';

/** A tool name as the MCP specification allows it. */
const ToolName = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'use 1-128 letters, digits, "_", "-" or "."');

/** The names under which the meta-tools are exposed. */
export const MetaToolNames = z.strictObject({
  /** Lists the binding files. */
  listFiles: ToolName.default('list_tool_files'),
  /** Returns one binding file. */
  readFile: ToolName.default('read_tool_file'),
  /** Returns one tool's full documentation: description, input and output schemas, annotations. */
  getDocs: ToolName.default('get_tool_docs'),
  /** Runs a script. */
  execute: ToolName.default('execute_code'),
});

/** What the host lets one script use; past any of them the script is stopped. */
export const SandboxLimits = z.strictObject({
  /** Heap of the script's interpreter, in bytes (1 MiB to 1 GiB). */
  memoryBytes: z
    .number()
    .int()
    .min(1 << 20)
    .max(1 << 30)
    .default(64 << 20),
  /** Stack of the script's interpreter, in bytes. */
  stackBytes: z
    .number()
    .int()
    .min(64 << 10)
    .max(8 << 20)
    .default(256 << 10),
  /** Wall time from start to result, tool calls included, in ms. */
  timeoutMs: z.number().int().min(10).max(3_600_000).default(30_000),
  /** Time spent running the script's own code (not waiting for tools), in ms. */
  cpuMs: z.number().int().min(10).max(600_000).default(5_000),
  /** Tool calls one script may make. */
  maxToolCalls: z.number().int().min(1).max(100_000).default(100),
  /** Tool calls of one script running at once; the rest wait their turn. */
  maxConcurrentCalls: z.number().int().min(1).max(256).default(8),
  /** Bytes of the script's result and of its console output, each. */
  maxOutputBytes: z
    .number()
    .int()
    .min(1 << 10)
    .max(64 << 20)
    .default(64 << 10),
  /** Bytes of a script's source. */
  maxScriptBytes: z
    .number()
    .int()
    .min(1 << 10)
    .max(4 << 20)
    .default(64 << 10),
  /** Scripts running at once on this server; one more is refused with `SCRIPTS_BUSY`. */
  maxConcurrentScripts: z.number().int().min(1).max(256).default(4),
});
export type SandboxLimits = z.output<typeof SandboxLimits>;

export const CodeModeOptions = z.strictObject({
  /** `server`: one file per server (`servers/<server>.d.ts`); `tool`: one per tool (`servers/<server>/<tool>.d.ts`). */
  binding: z.enum(['server', 'tool']).default('server'),
  /** `all`: the tools and the meta-tools in `tools/list`; `meta-tools`: only the meta-tools (the others stay callable). */
  expose: z.enum(['all', 'meta-tools']).default('all'),
  /** The name scripts use for the server's own (local) tools. */
  localServer: z
    .string()
    .regex(/^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/, 'use a JavaScript identifier')
    .default('local'),
  tools: MetaToolNames.prefault({}),
  limits: SandboxLimits.prefault({}),
  /** Characters of a script's source kept in the audit log. */
  auditSourceChars: z.number().int().min(0).max(65_536).default(2_000),
  mode: PluginModeSchema.default('enforce'),
});
export type CodeModeOptions = z.input<typeof CodeModeOptions>;
export type ParsedCodeModeOptions = z.output<typeof CodeModeOptions>;
