import type { CallToolResult } from '../protocol.js';
import type { CoreErrorCode } from '../errors.js';
import { attributeRefusal, refusal } from '../refusal.js';

/** The codes of upstream import: a subset of `CoreErrorCode`. */
export type UpstreamErrorCode =
  | typeof CoreErrorCode.UPSTREAM_TIMEOUT
  | typeof CoreErrorCode.UPSTREAM_UNAVAILABLE
  | typeof CoreErrorCode.UPSTREAM_DISCONNECTED
  | typeof CoreErrorCode.UPSTREAM_ERROR
  | typeof CoreErrorCode.UPSTREAM_INVALID_RESPONSE
  | typeof CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE;

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
 * Removes configured secrets (header values, environment values) from text
 * that came back from an upstream or its transport, and bounds its length,
 * before it reaches a log line or a model.
 */
export function createRedactor(secrets: Iterable<string>): (text: string) => string {
  const hidden = [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const secret of hidden) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    return out.length > MAX_MESSAGE_LENGTH ? `${out.slice(0, MAX_MESSAGE_LENGTH)}…` : out;
  };
}
