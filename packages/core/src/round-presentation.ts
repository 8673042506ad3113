import type { ServerContext } from './protocol.js';

// Core's side of the rounds @sluice/upstream seals around an upstream's input request: a server presents every call its
// round, and the core root entry exports isContinuedRound, without loading the SDK or the upstream import.

/** The request contexts shown to the pipeline with a carried state, and the wire state each really carried. */
const presented = new WeakMap<ServerContext, unknown>();

/**
 * The request context as the pipeline sees it. When a retry carries a state
 * Sluice sealed around an upstream's input request, and that round had
 * carried another party's state (a risk approval), the pipeline is shown
 * that party's state again, so that an approval and an upstream's own input
 * request compose in one call; the upstream's state stays with the proxy.
 */
export function presentRound(mcp: ServerContext, carriedOf: (wire: string) => string | undefined): ServerContext {
  const wire: unknown = mcp.mcpReq.requestState();
  if (typeof wire !== 'string') return mcp;
  const carried = carriedOf(wire);
  if (carried === undefined) return mcp;
  // The accessor's type parameter is the caller's claim (see RequestStateAccessor): the value is the carried string.
  const requestState = (() => carried) as ServerContext['mcpReq']['requestState'];
  const shown: ServerContext = { ...mcp, mcpReq: { ...mcp.mcpReq, requestState } };
  presented.set(shown, wire);
  return shown;
}

/** Whether the pipeline sees a carried state again, inside a round Sluice sealed (see `presentRound`). */
export function isContinuedRound(mcp: ServerContext | undefined): boolean {
  return mcp !== undefined && presented.has(mcp);
}

/** The state the request itself carried, whatever the pipeline is shown. */
export function wireStateOf(mcp: ServerContext | undefined): unknown {
  if (mcp === undefined) return undefined;
  return presented.has(mcp) ? presented.get(mcp) : mcp.mcpReq.requestState();
}
