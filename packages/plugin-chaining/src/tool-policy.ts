/** Per-tool chaining settings for local tools; they override the plugin's patterns. */
export interface ChainingPolicy {
  /** Follow this tool's next-tool directive (start or continue a chain). */
  follow?: boolean;
  /** Let chains call this tool. */
  target?: boolean;
}

declare module '@sluice/core' {
  interface ToolPolicy {
    /** Settings for the chaining plugin. */
    chaining?: ChainingPolicy;
  }
}
