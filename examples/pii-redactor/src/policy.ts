// Local tools opt out per tool: `server.tool({ ..., policy: { pii: { skip: true } } })`.
declare module '@sluice/core' {
  interface ToolPolicy {
    pii?: { skip?: boolean };
  }
}

export {};
