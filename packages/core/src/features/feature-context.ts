import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/server';
import type { CallerIdentity } from '../auth/identity.js';
import type { Headers, Transport } from '../context.js';
import type { Logger } from '../logger.js';
import type { AuthInfo } from '../protocol.js';

/** The requests for an upstream's resources, templates and prompts that the gateway serves. */
export type FeatureMethod =
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read'
  | 'resources/subscribe'
  | 'resources/unsubscribe'
  | 'prompts/list'
  | 'prompts/get'
  | 'completion/complete';

/** One request for what an upstream offers besides tools, as the `featureAccess` and `featureResult` hooks see it. */
export interface FeatureContext {
  readonly method: FeatureMethod;
  /** The upstream whose resources or prompts are listed, or which serves the request. */
  readonly upstream: string;
  /** The resource URI, or the prompt's exposed name; absent on lists. */
  readonly target?: string;
  readonly headers: Headers;
  readonly authInfo: AuthInfo | undefined;
  /** The verified caller, when the listener authenticated the request. */
  readonly auth: CallerIdentity | undefined;
  readonly transport: Transport;
  readonly logger: Logger;
}

/** An upstream's answer on its way to the client, which `featureResult` taps may rewrite (cap, redact). */
export type FeatureResult =
  | { readonly method: 'resources/read'; readonly result: ReadResourceResult }
  | { readonly method: 'prompts/get'; readonly result: GetPromptResult };

/** What the server hands the feature handlers: the two hooks, each only when some plugin tapped it. */
export interface FeatureGuards {
  /** A reason to hide (on lists) or refuse (on requests), or undefined to allow. */
  readonly access?: (ctx: FeatureContext) => string | undefined;
  readonly result?: (result: FeatureResult, ctx: FeatureContext) => Promise<FeatureResult>;
}
