/**
 * For an imported tool, the proxy stops reading an upstream response past
 * this multiple of the tool's limit. Results between the limit and the cap
 * are read and cut cleanly; the headroom covers JSON escaping and framing
 * on the wire, which the limit does not count. Past the cap the call fails
 * instead of buffering the body whole.
 */
export const UPSTREAM_READ_FACTOR = 4;
