import { CoreErrorCode } from '@sluice/core';

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
    /** The authorization server's `error` code, when it answered one (`invalid_grant`, ...). */
    readonly oauthError?: string,
  ) {
    super(`${detail}. ${suggestion}`);
  }
}

/** Where a caller connects their own account at a `per_user` upstream: the consent page, and its elicitation's id. */
export interface ConnectLink {
  readonly url: string;
  readonly elicitationId: string;
}

/**
 * A `per_user` upstream, and a caller who has not connected an account there
 * (or whose grant was revoked or refused). `link` is a single-use bearer
 * link for this caller alone: it goes to them, never to a log.
 */
export class UpstreamConnectRequired extends UpstreamAuthError {
  constructor(
    upstream: string,
    readonly link: ConnectLink,
  ) {
    super(
      upstream,
      `Upstream "${upstream}" acts with each caller's own account there, and this caller has not connected one`,
      'Open the link Sluice gives to connect your account, then call again.',
    );
  }
}

export const isUpstreamConnectRequired = (error: unknown): error is UpstreamConnectRequired =>
  isUpstreamAuthError(error) && 'link' in error;

export const isUpstreamAuthError = (error: unknown): error is UpstreamAuthError =>
  error instanceof Error && error.name === 'UpstreamAuthError' && 'suggestion' in error;

/**
 * What a caller without a grant is sent: the URL elicitation's parameters,
 * the error's message, and its data (the elicitation, `UPSTREAM_CONNECT_REQUIRED`, the upstream).
 */
export function connectElicitation(
  upstream: string,
  error: UpstreamConnectRequired,
  retry: string,
): {
  readonly message: string;
  readonly data: {
    elicitations: { mode: 'url'; url: string; elicitationId: string; message: string }[];
    code: string;
    upstream: string;
  };
} {
  const elicitation = {
    mode: 'url' as const,
    url: error.link.url,
    elicitationId: error.link.elicitationId,
    message: `Connect your account at upstream "${upstream}" so that Sluice can call it as you.`,
  };
  return {
    data: { elicitations: [elicitation], code: CoreErrorCode.UPSTREAM_CONNECT_REQUIRED, upstream },
    message: `Upstream "${upstream}" acts with your own account there, and you have not connected one: open the link in this error's elicitation to connect it, then ${retry}.`,
  };
}
