import type { Approver } from './approval.js';
import type { CallRequest, ContextRuntime } from './context.js';
import { Context, callArguments, checkedMeta } from './context.js';
import type { Meta } from './meta.js';
import { serverClosed, unknownTool } from './errors.js';
import type { Logger } from './logger.js';
import type { Pipeline, ToClientError } from './pipeline.js';
import type { CallToolResult } from './protocol.js';
import type { ToolTable } from './tool-table.js';

/** What running a call needs of its server. */
export interface CallParts {
  readonly table: ToolTable;
  readonly pipeline: Pipeline;
  readonly logger: Logger;
  /** The approver registered in the server's container, or the one that cannot ask. */
  approver(): Approver;
  isClosed(): boolean;
}

/**
 * Where every call enters the pipeline, whichever transport brought it (and
 * `ctx.call()` from inside another call): it waits for registrations under
 * way, finds the tool, builds the context and runs it.
 */
export class CallDispatcher {
  private readonly runtime: ContextRuntime;

  constructor(private readonly parts: CallParts) {
    this.runtime = {
      logger: parts.logger,
      dispatch: (name, args, request) => this.dispatch(name, args, request),
      approver: () => parts.approver(),
    };
  }

  /**
   * Runs a call. `toClient`, given by a transport's request handler, maps
   * how the call failed onto the error its client sees: the rejection is
   * the client's error already, with no `catch` of the transport's own.
   */
  dispatch(name: string, args: unknown, request: CallRequest, toClient?: ToClientError): Promise<CallToolResult> {
    const parts = this.parts;
    if (parts.isClosed()) return rejectWith(serverClosed('call'), toClient);
    if (!parts.table.busy) return this.dispatchNow(name, args, request, toClient);
    // One tool's failed registration is reported by ready(), not to calls of other tools.
    return parts.table
      .settled()
      .then(() =>
        parts.isClosed() ? rejectWith(serverClosed('call'), toClient) : this.dispatchNow(name, args, request, toClient),
      );
  }

  private dispatchNow(
    name: string,
    args: unknown,
    request: CallRequest,
    toClient: ToClientError | undefined,
  ): Promise<CallToolResult> {
    // The request is checked before the tool is looked up: a malformed one fails alike whatever it names.
    let checked: Record<string, unknown>;
    let meta: Readonly<Meta>;
    try {
      checked = callArguments(args);
      meta = checkedMeta(checked, request.meta);
    } catch (error) {
      // What the check threw, unchanged (or as the client sees it).
      return rejectWith(error, toClient);
    }
    const entry = this.parts.table.get(name);
    if (entry === undefined) return rejectWith(unknownTool(name, 'call'), toClient);
    return this.parts.pipeline.run(entry, new Context(this.runtime, entry.tool, checked, meta, request), toClient);
  }
}

/** A failure as a rejection: as it is, or as the client sees it. */
function rejectWith(error: unknown, toClient: ToClientError | undefined): Promise<never> {
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on what was thrown, unchanged unless mapped
  return Promise.reject(toClient === undefined ? error : toClient(error));
}
