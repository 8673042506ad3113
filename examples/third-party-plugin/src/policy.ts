// #region policy
// Local tools opt out per tool: `server.tool({ ..., policy: { audit: { skip: true } } })`.
declare module '@sluice/core' {
  interface ToolPolicy {
    audit?: { skip?: boolean };
  }
}
export {};
// #endregion policy
