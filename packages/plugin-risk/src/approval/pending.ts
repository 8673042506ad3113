import type { ApprovalChannel } from '../events.js';
import type { RiskLevel } from '../scoring/levels.js';

/**
 * A call waiting for a person's answer, as every replica lists it (from the
 * store): what the audit log says of it; an operator question also carries
 * its text, which the operator decides on.
 */
export interface PendingApproval {
  /** `<sequence>-<random>`: names the question in a view, and an operator question to answer. */
  readonly id: string;
  /** The name clients call the tool by. */
  readonly tool: string;
  /** Its source: the upstream's configured name, or `local`. */
  readonly server: string;
  /** The published (HITL-credited) level. */
  readonly level: RiskLevel;
  /** Why a person is asked (`risk L4`, or what the plugin that called `ctx.approve()` gave), masked and capped. */
  readonly reason: string | undefined;
  /** `elicitation` (2025-11-25, the call waits), `input-required` (2026-07-28, the client holds the question), or `operator`. */
  readonly via: ApprovalChannel;
  /** The verified caller's subject, when the listener authenticated the call. */
  readonly caller: string | undefined;
  /** When the person was asked (epoch ms). */
  readonly since: number;
  /** When the question lapses unanswered (epoch ms). */
  readonly expiresAt: number;
  /**
   * An operator question's text: the tool, its risk and its arguments,
   * secrets masked and capped at `approval.maxArgumentChars`, as the person
   * at a client would read it. An operator decides on it; absent for the
   * waits a client answers.
   */
  readonly message?: string;
}

/**
 * How many questions may wait at once (every replica's, in the store), all of
 * them listed, unless `approval.questions.max` says otherwise.
 */
export const MAX_PENDING_APPROVALS = 500;
