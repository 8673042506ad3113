/**
 * Sluice could not authenticate to an upstream: discovery, the token
 * endpoint or the upstream itself refused. The message names the upstream
 * and never holds a credential; `suggestion` says what can be done.
 */
export class UpstreamAuthError extends Error {
  override readonly name = 'UpstreamAuthError';

  constructor(
    readonly upstream: string,
    /** What failed, without the suggestion. */
    readonly detail: string,
    readonly suggestion: string,
  ) {
    super(`${detail}. ${suggestion}`);
  }
}

export const isUpstreamAuthError = (error: unknown): error is UpstreamAuthError =>
  error instanceof Error && error.name === 'UpstreamAuthError' && 'suggestion' in error;
