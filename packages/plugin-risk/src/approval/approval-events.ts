import type { AuditFrom, Logger } from '@sluice/core';
import { messageOf } from '@sluice/core';
import type { RiskLevel } from '../scoring/levels.js';
import type { OperatorVia } from './questions.js';

/** The call an approval event is about: never its arguments. */
export interface ApprovalEventSubject {
  /** The operator question's id; absent for a question the client answers. */
  readonly id?: string;
  /** Who was to answer: the client's person, or an operator. */
  readonly channel: 'client' | 'operator';
  readonly tool: string;
  readonly server: string;
  readonly level: RiskLevel;
  /** The verified caller's subject, when the listener authenticated the call. */
  readonly caller: string | undefined;
  /** When it happened (epoch ms). */
  readonly at: number;
}

/**
 * What happened to an approval, for an audit trail: `asked` (a person was
 * asked), `answered` (by whom, through which channel, with what reason),
 * `lapsed` (nobody answered in time), `refused` (an answer or a state that
 * could not be trusted: forged, replayed, bound to another call, or a
 * client trying to answer an operator's question; or a caller past its share
 * of waiting questions or of questions a minute).
 */
export type ApprovalEvent =
  | (ApprovalEventSubject & {
      readonly kind: 'asked';
      /** How the client's person is asked; absent for an operator's question. */
      readonly via?: 'elicitation' | 'input-required';
      /** An identical call (same caller, tool, arguments) was joined to a question already waiting. */
      readonly joined: boolean;
      readonly reason: string | undefined;
      /** The question's text: the tool, its risk, its arguments (secrets masked, capped). */
      readonly message: string;
      readonly expiresAt: number;
    })
  | (ApprovalEventSubject & {
      readonly kind: 'answered';
      readonly decision: 'approved' | 'denied';
      /** The operator's verified identity, or `client` when the client's person answered. */
      readonly by: string;
      /** `console`, `api`, `cli`, `webhook` for an operator; `elicitation` or `input-required` for the client. */
      readonly via: OperatorVia | 'elicitation' | 'input-required';
      readonly reason: string | undefined;
    })
  | (ApprovalEventSubject & { readonly kind: 'lapsed' })
  | (ApprovalEventSubject & {
      readonly kind: 'refused';
      /**
       * `invalid`: a forged, foreign, replayed or used state; `unsupported`:
       * the client cannot be asked; `ignored`: a client's answer to an
       * operator's question; `busy`: the caller's share of waiting questions
       * (or the list) is full, or the caller was asked its minute's
       * questions, so nobody was asked (told once a minute per caller,
       * however many refusals there were).
       */
      readonly code: 'invalid' | 'unsupported' | 'ignored' | 'busy';
      readonly why: string;
    });

export type ApprovalEventListener = (event: ApprovalEvent) => void;
/** The plugin's own audit listener: it learns the call an event is about, for its caller's budget. */
type AuditListener = (event: ApprovalEvent, from: AuditFrom | undefined) => void;

/**
 * The one place approval events leave the plugin (`RiskPlugin.onApprovalEvent`):
 * the gateway sends webhooks from it, an audit log appends from it. A
 * listener that throws is logged and never fails the call.
 */
export class ApprovalEvents {
  private readonly listeners = new Set<ApprovalEventListener>();
  private readonly auditors = new Set<AuditListener>();

  constructor(private readonly logger: Logger) {}

  on(listener: ApprovalEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The audit log's listener: given, beside each event, the call it came
   * from (its `authInfo`), which no other listener ever sees.
   */
  onAudit(listener: AuditListener): void {
    this.auditors.add(listener);
  }

  /** `from`: the call the event is about; absent for an operator's answer, which no caller made. */
  emit(event: ApprovalEvent, from?: AuditFrom): void {
    const frozen = Object.freeze(event);
    for (const listener of this.listeners) this.tell(frozen, () => listener(frozen));
    for (const listener of this.auditors) this.tell(frozen, () => listener(frozen, from));
  }

  private tell(event: ApprovalEvent, call: () => void): void {
    try {
      call();
    } catch (error) {
      this.logger.error(
        { event: 'ApprovalListenerFailed', kind: event.kind, err: messageOf(error) },
        'an approval event listener threw',
      );
    }
  }
}
