import { randomBytes } from 'node:crypto';
import { createRequestStateCodec } from '@modelcontextprotocol/server';
import type { ServerContext } from '@sluice/core';
import { invalidParams } from '@sluice/core';

/** What a multi-round tool keeps between rounds, sealed into `requestState`. */
export interface RoundState {
  readonly tool: string;
  readonly round: number;
  readonly answers: Readonly<Record<string, unknown>>;
}

/**
 * Seals and opens `requestState` with an HMAC, bound to the method, so a
 * client can carry state between rounds but not forge or alter it. The key is
 * `SLUICE_STATE_KEY` (shared by every replica) or a random per-process key.
 */
export class RoundStateSeal {
  private readonly codec;

  constructor(key: string | Uint8Array = process.env.SLUICE_STATE_KEY ?? randomBytes(32)) {
    this.codec = createRequestStateCodec<RoundState>({ key, ttlSeconds: 600, bind: (ctx) => ctx.mcpReq.method });
  }

  seal(state: RoundState, mcp: ServerContext): Promise<string> {
    return this.codec.mint(state, mcp);
  }

  /** The state a client echoed back, or undefined on a first round; tampered state is a -32602. */
  async open(tool: string, mcp: ServerContext): Promise<RoundState | undefined> {
    const wire = mcp.mcpReq.requestState();
    if (wire === undefined) return undefined;
    if (typeof wire !== 'string') throw invalidParams('requestState must be a string');
    let state: RoundState;
    try {
      state = await this.codec.verify(wire, mcp);
    } catch {
      throw invalidParams('requestState failed its integrity check: start the call again without it');
    }
    if (state.tool !== tool) throw invalidParams('requestState belongs to another tool');
    return state;
  }
}
