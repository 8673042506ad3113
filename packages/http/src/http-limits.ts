// Apart from http.ts, so that reading the defaults does not load the HTTP listener
// (the SDK's node adapter, hono): core's index exports them to every importer.

/** The defaults of the listener's limits; the README's security section lists them. */
export const HttpLimits = Object.freeze({
  SESSION_IDLE_MS: 30 * 60_000,
  SESSION_HANDSHAKE_MS: 30_000,
  MAX_SESSIONS: 10_000,
  MAX_SESSION_MEMORY_BYTES: 64 * 2 ** 20,
  MAX_INITIALIZE_BYTES: 64 * 2 ** 10,
  HEADERS_TIMEOUT_MS: 10_000,
  REQUEST_TIMEOUT_MS: 30_000,
  KEEP_ALIVE_TIMEOUT_MS: 5_000,
  MAX_CONNECTIONS: 1_024,
  /** URIs in one `subscriptions/listen` filter's `resourceSubscriptions`. */
  MAX_LISTEN_RESOURCES: 256,
  /** Characters of one URI there. */
  MAX_LISTEN_URI_CHARS: 2_048,
});
