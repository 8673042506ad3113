import type { CallRequest } from './context.js';
import { CoreErrorCode, SluiceError } from './errors.js';
import type { CallToolResult } from './protocol.js';
import type { ToolTable } from './tool-table.js';

/** What the core's own collaborators (adopt, the test kit) reach of a server and users do not. */
export interface ServerInternals {
  readonly table: ToolTable;
  /** Runs a call through the pipeline: the one entry point of every transport. */
  dispatch(name: string, args: unknown, request: CallRequest): Promise<CallToolResult>;
}

const internals = new WeakMap<object, ServerInternals>();

/** Called once by each server as it is built. */
export function registerInternals(server: object, parts: ServerInternals): void {
  internals.set(server, parts);
}

/** The tool table and dispatch of a server, for the core's own modules and tests. */
export function internalsOf(server: object): ServerInternals {
  const found = internals.get(server);
  if (found === undefined)
    throw new SluiceError(CoreErrorCode.INVALID_STATE, 'Not a Sluice server of this copy of core');
  return found;
}
