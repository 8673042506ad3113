import type { InputRequiredResult } from '@modelcontextprotocol/server';
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

/** The key of the connect question in a 2026-07-28 input-required round. */
export const CONNECT_INPUT_KEY = 'dev.sluice/connect';

/**
 * What a 2026-07-28 caller without a grant is sent: an input-required round
 * whose one question is the URL elicitation of the consent page. The
 * caller connects out of band and retries; the retry finds the grant (or is
 * asked again with a fresh link).
 */
export function connectRound(upstream: string, error: UpstreamConnectRequired): InputRequiredResult {
  const ask = {
    method: 'elicitation/create' as const,
    params: {
      mode: 'url' as const,
      url: error.link.url,
      elicitationId: error.link.elicitationId,
      message: `Connect your account at upstream "${upstream}" so that Sluice can call it as you, then continue.`,
    },
  };
  return { resultType: 'input_required', inputRequests: { [CONNECT_INPUT_KEY]: ask } };
}

/** Whether a 2026-07-28 retry answers the connect question with decline or cancel. */
export function connectDeclined(inputResponses: Record<string, unknown> | undefined): boolean {
  const answer = inputResponses?.[CONNECT_INPUT_KEY];
  if (typeof answer !== 'object' || answer === null) return false;
  const action = (answer as { action?: unknown }).action;
  return action === 'decline' || action === 'cancel';
}
