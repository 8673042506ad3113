import { refusal } from '@sluice/core';
import type { CallContext, CallToolResult, Tool } from '@sluice/core';
import { RiskErrorCode } from '../errors.js';
import { sourceKey } from '../exposure/registry.js';

/** Why calls to an exposed name are held. */
export interface Hold {
  /** The source whose copy of the name is held. */
  readonly server: string;
  /** The upstream's own name for the tool. */
  readonly tool: string;
  readonly code: RiskErrorCode;
  readonly message: string;
  readonly suggestion: string;
}

/**
 * Calls held back from running, by exposed name: tools awaiting re-review
 * after a redefinition, revoked tools, and copies still registered from an
 * earlier import of a tool now kept out. Held calls are refused and
 * `tools/list` leaves the tools out. Empty, it costs one size check per call.
 * (Not the approval gate: that asks a person before each call of a HITL tool.)
 */
export class CallHolds {
  private readonly holds = new Map<string, Hold>();

  hold(name: string, hold: Hold): void {
    this.holds.set(name, hold);
  }

  release(name: string, codes?: readonly RiskErrorCode[]): void {
    const hold = this.holds.get(name);
    if (hold && (codes === undefined || codes.includes(hold.code))) this.holds.delete(name);
  }

  get(name: string): Hold | undefined {
    return this.holds.get(name);
  }

  /** Drops the hold on `name` if it is `server`'s copy: the tool is gone from there. */
  forget(name: string, server: string): void {
    if (this.holds.get(name)?.server === server) this.holds.delete(name);
  }

  /** Every hold, by exposed name. */
  list(): Array<{ name: string; server: string; tool: string; code: RiskErrorCode; message: string }> {
    return [...this.holds].map(([name, { server, tool, code, message }]) => ({ name, server, tool, code, message }));
  }

  get size(): number {
    return this.holds.size;
  }

  /** The refusal for a held call, or undefined to let it run. */
  refuse(ctx: CallContext): CallToolResult | undefined {
    if (this.holds.size === 0) return undefined;
    const hold = this.holds.get(ctx.tool.name);
    if (hold === undefined || hold.server !== sourceKey(ctx.tool.source)) return undefined;
    return refusal({
      code: hold.code,
      message: hold.message,
      suggestion: hold.suggestion,
      details: { server: hold.server, tool: hold.tool },
    });
  }

  /**
   * The list without held tools. `sourceOf` says which source exposes a name
   * now; a name another source has taken since is not hidden.
   */
  filter(tools: Tool[], sourceOf: (name: string) => string | undefined): Tool[] {
    if (this.holds.size === 0) return tools;
    return tools.filter((tool) => {
      const hold = this.holds.get(tool.name);
      if (hold === undefined) return true;
      const owner = sourceOf(tool.name);
      return owner !== undefined && owner !== hold.server;
    });
  }
}

export function rereviewHold(server: string, tool: string, name: string): Hold {
  return {
    server,
    tool,
    code: RiskErrorCode.TOOL_AWAITING_REREVIEW,
    message: `The tool "${name}" changed its definition since it was approved and waits for an operator to review it again.`,
    suggestion: 'Do not retry; use another tool or ask the operator to review the change.',
  };
}

export function revokedHold(server: string, tool: string, name: string): Hold {
  return {
    server,
    tool,
    code: RiskErrorCode.TOOL_REVOKED,
    message: `The tool "${name}" was revoked by an operator.`,
    suggestion: 'Do not retry; use another tool.',
  };
}

export function notExposedHold(server: string, tool: string, name: string, reason: string): Hold {
  return {
    server,
    tool,
    code: RiskErrorCode.TOOL_NOT_EXPOSED,
    message: `The tool "${name}" is no longer exposed: ${reason}`,
    suggestion: 'Do not retry; use another tool.',
  };
}
