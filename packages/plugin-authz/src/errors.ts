/** The codes this plugin answers with. */
export const AuthzErrorCode = Object.freeze({
  /** The caller's identity does not grant this tool. */
  FORBIDDEN: 'FORBIDDEN',
} as const);

export type AuthzErrorCode = (typeof AuthzErrorCode)[keyof typeof AuthzErrorCode];
