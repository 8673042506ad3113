import { z } from 'zod';
import { PluginModeSchema } from '@sluice/core';

/** A tool name as the MCP specification allows it. */
const ToolName = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'use 1-128 letters, digits, "_", "-" or "."');

/** The names under which the meta-tools are exposed. */
export const MetaToolNames = z.strictObject({
  /** Lists the binding files. */
  listFiles: ToolName.default('list_tool_files').describe('Lists the binding files.'),
  /** Returns one binding file. */
  readFile: ToolName.default('read_tool_file').describe('Returns one binding file.'),
  /** Returns one tool's full documentation: description, input and output schemas, annotations. */
  getDocs: ToolName.default('get_tool_docs').describe(
    "Returns one tool's full documentation: description, input and output schemas, annotations.",
  ),
  /** Runs a script. */
  execute: ToolName.default('execute_code').describe('Runs a script.'),
});

/** What the host lets one script use; past any of them the script is stopped. */
export const SandboxLimits = z.strictObject({
  /** Heap of the script's interpreter, in bytes (1 MiB to 1 GiB). */
  memoryBytes: z
    .number()
    .int()
    .min(1 << 20)
    .max(1 << 30)
    .default(64 << 20)
    .describe("Heap of the script's interpreter, in bytes (1 MiB to 1 GiB)."),
  /** Stack of the script's interpreter, in bytes. */
  stackBytes: z
    .number()
    .int()
    .min(64 << 10)
    .max(8 << 20)
    .default(256 << 10)
    .describe("Stack of the script's interpreter, in bytes."),
  /** Wall time from start to result, tool calls included, in ms. */
  timeoutMs: z
    .number()
    .int()
    .min(10)
    .max(3_600_000)
    .default(30_000)
    .describe('Wall time from start to result, tool calls included, in ms.'),
  /** Time spent running the script's own code (not waiting for tools), in ms. */
  cpuMs: z
    .number()
    .int()
    .min(10)
    .max(600_000)
    .default(5_000)
    .describe("Time spent running the script's own code (not waiting for tools), in ms."),
  /** Tool calls one script may make. */
  maxToolCalls: z.number().int().min(1).max(100_000).default(100).describe('Tool calls one script may make.'),
  /** Tool calls of one script running at once; the rest wait their turn. */
  maxConcurrentCalls: z
    .number()
    .int()
    .min(1)
    .max(256)
    .default(8)
    .describe('Tool calls of one script running at once; the rest wait their turn.'),
  /** Bytes of the script's result and of its console output, each. */
  maxOutputBytes: z
    .number()
    .int()
    .min(1 << 10)
    .max(64 << 20)
    .default(64 << 10)
    .describe("Bytes of the script's result and of its console output, each."),
  /** Bytes of a script's source. */
  maxScriptBytes: z
    .number()
    .int()
    .min(1 << 10)
    .max(4 << 20)
    .default(64 << 10)
    .describe("Bytes of a script's source."),
  /** Scripts running at once on this server; one more is refused with `SCRIPTS_BUSY`. */
  maxConcurrentScripts: z
    .number()
    .int()
    .min(1)
    .max(256)
    .default(4)
    .describe('Scripts running at once on this server; one more is refused with `SCRIPTS_BUSY`.'),
  /**
   * Scripts one caller may run at once (the authenticated client and subject; else its session; all
   * unauthenticated callers without a session share one share); one more is refused with `SCRIPTS_BUSY`.
   */
  maxScriptsPerCaller: z
    .number()
    .int()
    .min(1)
    .max(256)
    .default(2)
    .describe(
      'Scripts one caller may run at once (by authenticated client and subject, else session; sessionless unauthenticated callers share one); one more is refused with `SCRIPTS_BUSY`.',
    ),
  /**
   * The fraction of one core a caller's scripts may use on average: what the worker threads spend running them
   * (interpreter set-up included) and what the main thread spends serving them. A caller may run ahead of it by what
   * it earns in `CPU_BANK_MS`; past that its running scripts are slowed to it, and a new one is refused with
   * `SCRIPTS_BUSY` until the debt is paid.
   */
  cpuSharePerCaller: z
    .number()
    .min(0.01)
    .max(64)
    .default(0.25)
    .describe(
      "The fraction of one core a caller's scripts may use on average (workers and main thread); past it they are slowed, and new ones refused with `SCRIPTS_BUSY`.",
    ),
});
export type SandboxLimits = z.output<typeof SandboxLimits>;

/** Where a script that pauses at a call needing approval keeps the calls it already made. */
export const JournalOptions = z.strictObject({
  /**
   * The HMAC-SHA256 key (at least 32 bytes) that seals a paused script's state. Give every replica the same one.
   * Absent: a random key per process, so a paused script resumes only on the replica that paused it.
   */
  secret: z
    .string()
    .refine((value) => Buffer.byteLength(value, 'utf8') >= 32, 'must be at least 32 bytes')
    .optional()
    .describe(
      "The HMAC-SHA256 key (at least 32 bytes) that seals a paused script's state; give every replica the same one. Absent: a random key per process.",
    ),
  /** Bytes of a journal (the results of the calls a script completed before it paused); past it the script cannot pause. */
  maxBytes: z
    .number()
    .int()
    .min(1 << 10)
    .max(16 << 20)
    .default(256 << 10)
    .describe(
      'Bytes of a journal (the results of the calls a script completed before it paused); past it the script cannot pause.',
    ),
  /** How long a paused script's journal is kept, in ms: past it the script cannot resume. */
  ttlMs: z
    .number()
    .int()
    .min(1_000)
    .max(86_400_000)
    .default(600_000)
    .describe("How long a paused script's journal is kept, in ms: past it the script cannot resume."),
  /** Paused scripts (live journals) on the server, over every replica sharing the store; one more cannot pause (`JOURNALS_FULL`). */
  maxPausedScripts: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(1_000)
    .describe(
      'Paused scripts (live journals) on the server, over every replica sharing the store; one more cannot pause (`JOURNALS_FULL`).',
    ),
  /**
   * Paused scripts one caller may hold (the authenticated client and subject; else its session; all unauthenticated
   * callers without a session share one share); one more cannot pause (`JOURNALS_FULL`).
   */
  maxPausedPerCaller: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(16)
    .describe(
      'Paused scripts one caller may hold (by authenticated client and subject, else session; sessionless unauthenticated callers share one); one more cannot pause (`JOURNALS_FULL`).',
    ),
  /** Bytes of every live journal on the server together, over every replica sharing the store. */
  maxTotalBytes: z
    .number()
    .int()
    .min(1 << 10)
    .max(2 ** 40)
    .default(64 << 20)
    .describe('Bytes of every live journal on the server together, over every replica sharing the store.'),
  /** Bytes of one caller's live journals together. */
  maxBytesPerCaller: z
    .number()
    .int()
    .min(1 << 10)
    .max(2 ** 40)
    .default(4 << 20)
    .describe("Bytes of one caller's live journals together."),
});
export type JournalOptions = z.output<typeof JournalOptions>;

export const CodeModeOptions = z.strictObject({
  /** `server`: one file per server (`servers/<server>.d.ts`); `tool`: one per tool (`servers/<server>/<tool>.d.ts`). */
  binding: z
    .enum(['server', 'tool'])
    .default('server')
    .describe(
      '`server`: one file per server (`servers/<server>.d.ts`); `tool`: one per tool (`servers/<server>/<tool>.d.ts`).',
    ),
  /** `all`: the tools and the meta-tools in `tools/list`; `meta-tools`: only the meta-tools (the others stay callable). */
  expose: z
    .enum(['all', 'meta-tools'])
    .default('all')
    .describe(
      '`all`: the tools and the meta-tools in `tools/list`; `meta-tools`: only the meta-tools (the others stay callable).',
    ),
  /** The name scripts use for the server's own (local) tools. */
  localServer: z
    .string()
    .regex(/^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/, 'use a JavaScript identifier')
    .default('local')
    .describe("The name scripts use for the server's own (local) tools."),
  /** The names under which the meta-tools are exposed. */
  tools: MetaToolNames.prefault({}).describe('The names under which the meta-tools are exposed.'),
  /** The tool a script's `tools.search(query)` calls (tool search's `search_tools`), bound for a caller who may call it. */
  searchTool: ToolName.default('search_tools').describe(
    "The tool a script's `tools.search(query)` calls (tool search's `search_tools`), bound for a caller who may call it.",
  ),
  /** What the host lets one script use; past any of them the script is stopped. */
  limits: SandboxLimits.prefault({}).describe(
    'What the host lets one script use; past any of them the script is stopped.',
  ),
  /** Where a script that pauses at a call needing approval keeps the calls it already made. */
  journal: JournalOptions.prefault({}).describe(
    'Where a script that pauses at a call needing approval keeps the calls it already made.',
  ),
  /** Characters of a script's source kept in the audit log. */
  auditSourceChars: z
    .number()
    .int()
    .min(0)
    .max(65_536)
    .default(2_000)
    .describe("Characters of a script's source kept in the audit log."),
  mode: PluginModeSchema.default('enforce'),
});
export type CodeModeOptions = z.input<typeof CodeModeOptions>;
export type ParsedCodeModeOptions = z.output<typeof CodeModeOptions>;
