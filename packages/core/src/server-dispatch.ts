import type { CallRequest, ContextRuntime } from './context.js';
import { Context, callArguments } from './context.js';
import { serverClosed, unknownTool } from './errors.js';
import type { Pipeline, ToClientError } from './pipeline.js';
import type { CallToolResult } from './protocol.js';
import type { ToolTable } from './tool-table.js';

/** What a dispatcher reads of its server. */
export interface DispatchParts {
  readonly table: ToolTable;
  readonly pipeline: Pipeline;
  readonly runtime: ContextRuntime;
  isClosed(): boolean;
}

/**
 * Runs a call by the tool's name through the pipeline: the one entry point of
 * every transport, in-process calls and `ctx.call()`. A call made while tools
 * are still being registered waits for the table to settle; a call after
 * `close()` is refused.
 */
export class Dispatcher {
  constructor(private readonly parts: DispatchParts) {}

  /**
   * `toClient`, given by a transport's request handler, maps how the call
   * failed onto the error its client sees: the rejection is the client's
   * error already, with no `catch` of the transport's own.
   */
  dispatch(name: string, args: unknown, request: CallRequest, toClient?: ToClientError): Promise<CallToolResult> {
    const { parts } = this;
    if (parts.isClosed()) return rejectWith(serverClosed('call'), toClient);
    if (!parts.table.busy) return this.now(name, args, request, toClient);
    // One tool's failed registration is reported by ready(), not to calls of other tools.
    return parts.table
      .settled()
      .then(() =>
        parts.isClosed() ? rejectWith(serverClosed('call'), toClient) : this.now(name, args, request, toClient),
      );
  }

  private now(
    name: string,
    args: unknown,
    request: CallRequest,
    toClient: ToClientError | undefined,
  ): Promise<CallToolResult> {
    const entry = this.parts.table.get(name);
    if (entry === undefined) return rejectWith(unknownTool(name, 'call'), toClient);
    let ctx: Context;
    try {
      ctx = new Context(this.parts.runtime, entry.tool, callArguments(args), request);
    } catch (error) {
      // What the constructor threw, unchanged (or as the client sees it).
      return rejectWith(error, toClient);
    }
    return this.parts.pipeline.run(entry, ctx, toClient);
  }
}

/** A failure as a rejection: as it is, or as the client sees it. */
function rejectWith(error: unknown, toClient: ToClientError | undefined): Promise<never> {
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on what was thrown, unchanged unless mapped
  return Promise.reject(toClient === undefined ? error : toClient(error));
}
