/** Every code the risk plugin uses: refusals, skip reasons, and its own failures. */
export const RiskErrorCode = Object.freeze({
  /** The upstream redefined the tool; calls wait until an operator approves the new definition. */
  TOOL_AWAITING_REREVIEW: 'TOOL_AWAITING_REREVIEW',
  /** An operator revoked the tool. */
  TOOL_REVOKED: 'TOOL_REVOKED',
  /** The tool was kept out at import; calls to a copy still registered from an earlier import are refused. */
  TOOL_NOT_EXPOSED: 'TOOL_NOT_EXPOSED',
  /** Shadowing rule R1: the exposed name (or a look-alike) is already claimed by another source. */
  R1_ALIAS_COLLISION: 'R1_ALIAS_COLLISION',
  /** Shadowing rule R2: the description imperatively references another server's tool, with concealment or exfiltration wording. */
  R2_CROSS_SERVER_REFERENCE: 'R2_CROSS_SERVER_REFERENCE',
  /** Shadowing rule R3: the description names another configured upstream. */
  R3_SELF_SCOPE_VIOLATION: 'R3_SELF_SCOPE_VIOLATION',
  /** The poisoning scan found signatures and the policy is `block`. */
  POISONING_BLOCKED: 'POISONING_BLOCKED',
  /** `scanResults` under `policy: 'block'`: a tool's result carried blocking poisoning signatures and was withheld. */
  RESULT_POISONING_BLOCKED: 'RESULT_POISONING_BLOCKED',
  /** The composed level is above `maxRisk`. */
  ABOVE_MAX_RISK: 'ABOVE_MAX_RISK',
  /** The definition cannot be fingerprinted (not well-formed UTF-16, not JSON, too deep). */
  UNHASHABLE_DEFINITION: 'UNHASHABLE_DEFINITION',
  /** The ledger's persisted state cannot be read; imports fail closed. */
  LEDGER_UNREADABLE: 'LEDGER_UNREADABLE',
  /** `approveRereview()` or `revoke()` named a tool the ledger has never seen. */
  UNKNOWN_LEDGER_ENTRY: 'UNKNOWN_LEDGER_ENTRY',
  /** A person declined the call (or answered the approval form with anything but yes). */
  APPROVAL_DECLINED: 'APPROVAL_DECLINED',
  /** The person dismissed the approval request without answering. */
  APPROVAL_CANCELLED: 'APPROVAL_CANCELLED',
  /** Nobody answered in time: the elicitation timed out, or the 2026-07-28 state expired. */
  APPROVAL_TIMEOUT: 'APPROVAL_TIMEOUT',
  /** The retry's approval state was tampered with, replayed, or belongs to another call. */
  APPROVAL_INVALID: 'APPROVAL_INVALID',
  /** Nobody can be asked: the client cannot show a form, or the call did not come from an MCP client. */
  APPROVAL_UNAVAILABLE: 'APPROVAL_UNAVAILABLE',
  /** Nobody was asked: the caller already has its share of questions waiting (`approval.questions.perCaller`), or the list is full (`approval.questions.max`). */
  APPROVAL_BUSY: 'APPROVAL_BUSY',
  /** Audit mode: the call would have waited for a person's approval. */
  APPROVAL_REQUIRED: 'APPROVAL_REQUIRED',
} as const);

export type RiskErrorCode = (typeof RiskErrorCode)[keyof typeof RiskErrorCode];
