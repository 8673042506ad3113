import { randomBytes } from 'node:crypto';
import type { ApprovalChannel } from '../events.js';
import type { RiskLevel } from '../scoring/levels.js';

/**
 * A call waiting for a person's answer, as an operator may see it: what the
 * audit log says of it, never its arguments or the question's text.
 */
export interface PendingApproval {
  /** Opaque, random: names the wait in a view, nothing more. */
  readonly id: string;
  /** The name clients call the tool by. */
  readonly tool: string;
  /** Its source: the upstream's configured name, or `local`. */
  readonly server: string;
  /** The published (HITL-credited) level. */
  readonly level: RiskLevel;
  /** Why a person is asked (`risk L4`, or what the plugin that called `ctx.approve()` gave), masked and capped. */
  readonly reason: string | undefined;
  /** `elicitation` (2025-11-25, the call waits) or `input-required` (2026-07-28, the client holds the question). */
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

/** At most this many waits are kept for the view; beyond, the oldest is forgotten (its call still waits). */
export const MAX_PENDING_APPROVALS = 500;
/** A reason longer than this is cut. */
const MAX_REASON_CHARS = 200;

interface Entry {
  readonly view: PendingApproval;
  /** For a 2026-07-28 question: its state's nonce, spent when the client answers on any replica. */
  readonly nonce: string | undefined;
}

export type PendingInput = Omit<PendingApproval, 'id' | 'reason'> & {
  readonly reason?: string | undefined;
  readonly nonce?: string;
};

/**
 * The approvals a person has not answered yet, in the order they were asked.
 * A 2025-11-25 wait leaves when its elicitation settles (answered, timed out,
 * cancelled); a 2026-07-28 question leaves when its retry spends the nonce
 * (here, or on another replica: `list` asks `spent`) or when it expires.
 * Bounded by `max`; reads are snapshots.
 */
export class PendingApprovals {
  private readonly entries = new Map<string, Entry>();
  private readonly byNonce = new Map<string, string>();

  constructor(
    private readonly now: () => number,
    private readonly mask: (text: string) => string,
    private readonly max = MAX_PENDING_APPROVALS,
  ) {}

  /** Records a wait; returns the function that ends it (safe to call twice). */
  add(input: PendingInput): () => void {
    this.prune();
    while (this.entries.size >= this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.remove(oldest);
    }
    const id = randomBytes(12).toString('base64url');
    const reason = input.reason === undefined ? undefined : this.mask(input.reason).slice(0, MAX_REASON_CHARS);
    const { nonce, ...fields } = input;
    this.entries.set(id, { view: Object.freeze({ ...fields, id, reason }), nonce });
    if (nonce !== undefined) this.byNonce.set(nonce, id);
    return () => this.remove(id);
  }

  /** The 2026-07-28 question with this nonce was answered (or refused): it no longer waits. */
  settle(nonce: string): void {
    const id = this.byNonce.get(nonce);
    if (id !== undefined) this.remove(id);
  }

  /**
   * What waits now, oldest first. `spent` says whether a 2026-07-28 nonce was
   * used elsewhere (another replica took the retry); such entries leave.
   */
  async list(spent?: (nonce: string) => Promise<boolean>): Promise<PendingApproval[]> {
    this.prune();
    const shown: PendingApproval[] = [];
    for (const entry of [...this.entries.values()]) {
      if (entry.nonce !== undefined && spent !== undefined && (await spent(entry.nonce))) {
        this.remove(entry.view.id);
        continue;
      }
      shown.push(entry.view);
    }
    return shown;
  }

  get size(): number {
    return this.entries.size;
  }

  private prune(): void {
    const now = this.now();
    for (const [id, entry] of this.entries) if (entry.view.expiresAt <= now) this.remove(id);
  }

  private remove(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    if (entry.nonce !== undefined) this.byNonce.delete(entry.nonce);
  }
}
