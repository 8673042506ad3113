import type { Redactions } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import type { CoreErrorCode } from '@sluice/core';
import { refusal } from '@sluice/core';
import { attributeRefusal } from '@sluice/core/internal';

/** The codes of upstream import: a subset of `CoreErrorCode`. */
export type UpstreamErrorCode =
  | typeof CoreErrorCode.UPSTREAM_TIMEOUT
  | typeof CoreErrorCode.UPSTREAM_UNAVAILABLE
  | typeof CoreErrorCode.UPSTREAM_DISCONNECTED
  | typeof CoreErrorCode.UPSTREAM_ERROR
  | typeof CoreErrorCode.UPSTREAM_INVALID_RESPONSE
  | typeof CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE
  | typeof CoreErrorCode.UPSTREAM_UNAUTHORIZED
  | typeof CoreErrorCode.UPSTREAM_CONNECT_REQUIRED;

/** A failed proxied call, as the model reads it; names the upstream, never its address or secrets. */
export function upstreamFailure(
  code: UpstreamErrorCode,
  upstream: string,
  message: string,
  suggestion: string,
  retryAfterMs?: number,
): CallToolResult {
  const refused = refusal({
    code,
    message,
    suggestion,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    details: { upstream },
  });
  return attributeRefusal(refused, 'core');
}

/** Shorter than any secret worth hiding, and long enough not to blank out ordinary words. */
const MIN_SECRET_LENGTH = 4;
const MAX_MESSAGE_LENGTH = 300;

/**
 * The forms a secret travels in: as it is, percent-encoded (as in a URL
 * path or query, with `%20` or `+` for spaces), and percent-decoded.
 */
export function secretForms(secret: string): string[] {
  const forms = [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)];
  try {
    forms.push(decodeURIComponent(secret));
  } catch {
    // Not percent-encoded text: nothing to decode.
  }
  return forms;
}

/**
 * Removes configured secrets (header values, environment values, URL query
 * values, values the operator listed), in every form they travel in, from
 * text that came back from an upstream or its transport, and bounds its
 * length, before it reaches a log line or a model.
 */
export function createRedactor(secrets: Iterable<string>, shared?: Redactions): (text: string) => string {
  const hidden = [...new Set([...secrets].flatMap(secretForms))]
    .filter((s) => s.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  return (text) => {
    let out = shared === undefined ? text : shared.mask(text);
    for (const secret of hidden) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    return out.length > MAX_MESSAGE_LENGTH ? `${out.slice(0, MAX_MESSAGE_LENGTH)}…` : out;
  };
}
