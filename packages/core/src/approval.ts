import type { InputRequiredResult } from '@modelcontextprotocol/server';
import type { CallContext } from './context.js';
import { CoreErrorCode, SluiceError } from './errors.js';

/** What a call asks a person to approve. */
export interface ApprovalRequest {
  /** A sentence for the person: what will happen if they accept. Never ask for secrets. */
  readonly message: string;
  /** Why approval is needed (a risk level, a policy name), for logs. */
  readonly reason?: string;
}

export type ApprovalDecision =
  | { readonly approved: true }
  | {
      readonly approved: false;
      /**
       * `declined` by the person, `cancelled`, `timeout`, `unsupported` by the
       * client, or `invalid` (a 2026-07-28 retry whose state was tampered
       * with, replayed or bound to another call).
       */
      readonly reason: 'declined' | 'cancelled' | 'timeout' | 'unsupported' | 'invalid';
      readonly detail?: string;
    }
  | {
      /**
       * Not decided yet: a 2026-07-28 client asks the person between two
       * rounds. Return `result` from a `preCall` tap of a call that came over
       * MCP; the client's retry carries the answer, and `approve()` then
       * decides. `approved` is false so that a caller who reads only that
       * field refuses the call rather than runs it.
       */
      readonly approved: false;
      readonly reason: 'input-required';
      readonly result: InputRequiredResult;
    };

/**
 * Asks a person. Registered under `Tokens.Approver` by the plugin that knows
 * how (the risk plugin); `ctx.approve()` delegates to it.
 */
export interface Approver {
  approve(ctx: CallContext, request: ApprovalRequest): Promise<ApprovalDecision>;
}

/** The seam's default: with no approver registered, nothing can be approved. */
export const noApprover: Approver = Object.freeze({
  // eslint-disable-next-line @typescript-eslint/require-await -- async so that the refusal is a rejection, never a synchronous throw
  async approve(): Promise<ApprovalDecision> {
    throw new SluiceError(
      CoreErrorCode.APPROVAL_UNAVAILABLE,
      'ctx.approve() needs an approver: add a plugin that registers one (for example the risk plugin)',
    );
  },
});
