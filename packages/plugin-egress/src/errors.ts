/** The codes this plugin answers with. */
export const EgressErrorCode = Object.freeze({
  /** The result was over the limit and could not be cut: the tool's output schema needs its structuredContent whole. */
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  /** A tool's `policy.egress` is malformed (raised when the tool is registered). */
  INVALID_POLICY: 'INVALID_POLICY',
} as const);

export type EgressErrorCode = (typeof EgressErrorCode)[keyof typeof EgressErrorCode];
