import type { EgressPolicy } from './options.js';

// Local tools set their own limit: `server.tool({ ..., policy: { egress: { maxPayloadBytes: 65_536 } } })`.
declare module '@sluice/core' {
  interface ToolPolicy {
    /** The egress guard's limit for this tool; wins over patterns and the server-wide limit. */
    egress?: EgressPolicy;
  }
}

export {};
