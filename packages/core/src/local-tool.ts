import type { CallContext, Executor } from './context.js';
import { CoreErrorCode, SluiceError, messageOf } from './errors.js';
import type { CallToolResult } from './protocol.js';
import { toolError } from './refusal.js';
import type { CompiledSchema } from './schema.js';
import { compileSchema } from './schema.js';
import type { ToolDraft } from './tool-table.js';
import type { SluiceTool, ToolDefinition } from './tool.js';
import { assertToolName } from './tool.js';
import type { Tool } from './protocol.js';
import { isInputRequired } from './protocol.js';
import { isThenable } from './hooks.js';
import type { ToolHandler } from './tool.js';

/**
 * The innermost executor of a local tool. A handler that throws produces an
 * `isError` result the model can read (a tool failure, not a protocol
 * error); a result that breaks the declared output schema is a server bug.
 * A handler that answers at once is not awaited: its result is checked and
 * handed back in a resolved promise, without a turn of the microtask queue.
 */
export function localExecutor(
  handler: ToolHandler<Record<string, unknown>>,
  output: CompiledSchema | undefined,
): Executor {
  const finish = (result: unknown, ctx: CallContext): CallToolResult | Promise<CallToolResult> =>
    checkedResult(result, output, ctx);
  return (ctx) => {
    let answer: ReturnType<typeof handler>;
    try {
      answer = handler(ctx.arguments, ctx);
    } catch (error) {
      return settle(handlerFailed, error, ctx);
    }
    if (isThenable(answer))
      return Promise.resolve(answer).then(
        (result) => finish(result, ctx),
        (error: unknown) => handlerFailed(error, ctx),
      );
    return settle(finish, answer, ctx);
  };
}

/** `step(value, ctx)` as a promise: what it returns, resolved, or what it throws, rejected. */
function settle<T>(
  step: (value: T, ctx: CallContext) => CallToolResult | Promise<CallToolResult>,
  value: T,
  ctx: CallContext,
): Promise<CallToolResult> {
  try {
    return Promise.resolve(step(value, ctx));
  } catch (error) {
    // Passed on unchanged, as an async function would reject with it.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return Promise.reject(error);
  }
}

/** What a handler that threw or rejected leaves: an error result the model reads, or the error itself. */
function handlerFailed(error: unknown, ctx: CallContext): CallToolResult {
  if (ctx.signal.aborted) throw error;
  // A deliberate protocol error (e.g. invalidParams() for tampered request state) stays one.
  if (SluiceError.is(error) && error.rpcCode !== undefined) throw error;
  ctx.logger.warn({ event: 'tool.error', err: error }, `tool handler threw: ${messageOf(error)}`);
  return toolError({
    code: CoreErrorCode.TOOL_ERROR,
    message: `Tool "${ctx.tool.name}" failed: ${messageOf(error)}`,
    suggestion: 'Check the arguments, or try another approach.',
  });
}

/** A handler's result as the pipeline takes it: checked to be a tool result, and against the output schema. */
function checkedResult(
  result: unknown,
  output: CompiledSchema | undefined,
  ctx: CallContext,
): CallToolResult | Promise<CallToolResult> {
  // A 2026-07-28 handler may ask the client for input; the SDK carries that result as it is.
  if (isInputRequired(result)) return result as CallToolResult;
  if (!isCallToolResult(result)) {
    throw new SluiceError(
      CoreErrorCode.INVALID_RESULT,
      `Tool "${ctx.tool.name}" returned something that is not a tool result`,
      { hook: 'handler' },
    );
  }
  if (output && !result.isError) return checkOutput(output, result, ctx).then(() => result);
  return result;
}

function isCallToolResult(value: unknown): value is CallToolResult {
  return typeof value === 'object' && value !== null && Array.isArray((value as CallToolResult).content);
}

async function checkOutput(output: CompiledSchema, result: CallToolResult, ctx: CallContext): Promise<void> {
  if (result.structuredContent === undefined) {
    throw new SluiceError(
      CoreErrorCode.INVALID_RESULT,
      `Tool "${ctx.tool.name}" declares an output schema but returned no structuredContent`,
      {
        hook: 'handler',
      },
    );
  }
  const checked = await output.validate(result.structuredContent);
  if (!checked.ok) {
    throw new SluiceError(
      CoreErrorCode.INVALID_RESULT,
      `Tool "${ctx.tool.name}" returned structuredContent that breaks its output schema: ${checked.message}`,
      {
        hook: 'handler',
      },
    );
  }
}

/** A local tool's definition checked and compiled into what `admit()` takes. */
export function localDraft(definition: ToolDefinition): ToolDraft {
  // Plain JavaScript callers may pass anything.
  if (typeof (definition as unknown) !== 'object' || (definition as unknown) === null) {
    throw new SluiceError(CoreErrorCode.INVALID_TOOL, 'server.tool() takes a tool definition object');
  }
  assertToolName(definition.name);
  if (typeof definition.handler !== 'function') {
    throw new SluiceError(CoreErrorCode.INVALID_TOOL, `Tool "${definition.name}" has no handler function`);
  }
  const input = compileSchema(definition.inputSchema ?? { type: 'object' }, 'input', definition.name);
  const output =
    definition.outputSchema === undefined
      ? undefined
      : compileSchema(definition.outputSchema, 'output', definition.name);
  const tool: SluiceTool = {
    name: definition.name,
    definition: {
      name: definition.name,
      ...(definition.title === undefined ? {} : { title: definition.title }),
      ...(definition.description === undefined ? {} : { description: definition.description }),
      inputSchema: input.json as Tool['inputSchema'],
      ...(output ? { outputSchema: output.json } : {}),
      ...(definition.annotations === undefined ? {} : { annotations: definition.annotations }),
      ...(definition._meta === undefined ? {} : { _meta: definition._meta }),
    },
    policy: { ...definition.policy },
    source: { kind: 'local' },
  };
  return { tool, base: localExecutor(definition.handler, output), input };
}
