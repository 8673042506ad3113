import { refusal, toolError } from '@sluice/core';
import type { CallContext, CallToolResult, ToolDefinition } from '@sluice/core';

type Args = Record<string, unknown>;
import type { Bindings } from './bindings.js';
import { filePaths, readFile, toolDocs } from './bindings.js';
import { CodeModeErrorCode } from './errors.js';
import type { ParsedCodeModeOptions } from './options.js';

/** What the meta-tools need from the plugin. */
export interface MetaToolRuntime {
  readonly config: ParsedCodeModeOptions;
  /** The bindings of the tools the caller of `ctx` may see. */
  bindingsFor(ctx: CallContext): Bindings;
  /** Runs a script for the caller of `ctx`. */
  execute(code: string, ctx: CallContext): Promise<CallToolResult>;
}

const text = (value: string, structured?: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: value }],
  ...(structured ? { structuredContent: structured } : {}),
});

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** The four meta-tools: list the binding files, read one, get one tool's docs, run a script. */
export function metaTools(runtime: MetaToolRuntime): ToolDefinition[] {
  const { config } = runtime;
  const names = config.tools;
  const level = config.binding;
  const limits = config.limits;
  return [
    {
      name: names.listFiles,
      description: `Lists the TypeScript declaration files of the tools a script run by ${names.execute} can call, one file per ${level}. Read them with ${names.readFile}.`,
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: READ_ONLY,
      handler: (_args, ctx) => {
        const files = filePaths(runtime.bindingsFor(ctx), level);
        return text(files.join('\n'), { files });
      },
    },
    {
      name: names.readFile,
      description: `Returns one file that ${names.listFiles} lists: compact signatures of tools, called from ${names.execute} scripts as \`await server.tool({ ...args })\`.`,
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string', maxLength: 512, description: 'A path from list_tool_files' } },
        required: ['path'],
        additionalProperties: false,
      },
      annotations: READ_ONLY,
      handler: (args, ctx) => {
        const path = String((args as Args).path);
        const file = readFile(runtime.bindingsFor(ctx), level, path, names.getDocs);
        return file === undefined
          ? toolError({
              code: CodeModeErrorCode.NOT_FOUND,
              message: `There is no file ${JSON.stringify(path.slice(0, 512))}.`,
              suggestion: `Call ${names.listFiles} for the files there are.`,
            })
          : text(file);
      },
    },
    {
      name: names.getDocs,
      description: `Returns the full documentation of one tool a script can call: description, signature, input and output schemas, annotations.`,
      inputSchema: {
        type: 'object',
        properties: {
          tool: { type: 'string', maxLength: 300, description: 'As "server.function", or the tool’s exposed name' },
        },
        required: ['tool'],
        additionalProperties: false,
      },
      annotations: READ_ONLY,
      handler: (args, ctx) => {
        const ref = String((args as Args).tool);
        const tool = runtime.bindingsFor(ctx).find(ref);
        return tool === undefined
          ? toolError({
              code: CodeModeErrorCode.NOT_FOUND,
              message: `No tool ${JSON.stringify(ref.slice(0, 300))} can be called from a script.`,
              suggestion: `Call ${names.listFiles} and ${names.readFile} for the tools there are.`,
            })
          : text(toolDocs(tool));
      },
    },
    {
      name: names.execute,
      description:
        'Runs a JavaScript script that calls tools and returns what the script returns, in one step. ' +
        'The script is the body of an async function: `const a = await server.tool({ ...args }); return { a };`. ' +
        `Tools are declared in the files ${names.listFiles} lists; a tool returns its structured content, or its text. ` +
        'A failed or refused call throws a ToolError whose `code` says why (e.g. SERVER_BUSY): catch it to recover. ' +
        'console.log output comes back in `logs`. There are no imports, timers, files or network: only the tools. ' +
        `Limits: ${limits.maxToolCalls} tool calls, ${limits.timeoutMs} ms, ${limits.cpuMs} ms of CPU, ` +
        `${Math.round(limits.memoryBytes / 2 ** 20)} MiB of memory, ${limits.maxOutputBytes} bytes of result.`,
      inputSchema: {
        type: 'object',
        properties: { code: { type: 'string', minLength: 1, description: 'The body of an async JavaScript function' } },
        required: ['code'],
        additionalProperties: false,
      },
      handler: (args, ctx) => runtime.execute(String((args as Args).code), ctx),
    },
  ];
}

/**
 * The answer when the caller's script slots, or the server's, are all taken (`max`: how many), or when the caller
 * owes CPU (`max`: its share of one core; `owedMs`: how long until it has paid).
 */
export function scriptsBusy(share: 'caller' | 'server' | 'cpu', max: number, owedMs = 0): CallToolResult {
  if (share === 'cpu') {
    const retryAfterMs = Math.max(1, Math.ceil(owedMs));
    return refusal({
      code: CodeModeErrorCode.SCRIPTS_BUSY,
      message: `Your scripts have used more CPU than your share (${max} of one core, on average).`,
      suggestion: `Run this script again in ${retryAfterMs} ms; do less computing in each script.`,
      retryAfterMs,
      details: { share },
    });
  }
  return refusal({
    code: CodeModeErrorCode.SCRIPTS_BUSY,
    message:
      share === 'caller'
        ? `${max} of your scripts are running, as many as one caller may run at once.`
        : `${max} scripts are running on this server, as many as may run at once.`,
    suggestion: 'Wait for your earlier scripts to finish, then run this one again.',
    retryAfterMs: 1_000,
    details: { share },
  });
}
