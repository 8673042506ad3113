import type {
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
} from '@modelcontextprotocol/server';
import type { ImportSource, SkippedTool } from '../tool.js';
import type { CallerIdentity } from '../auth/identity.js';
import type { Headers, Transport } from '../context.js';
import type { Logger } from '../logger.js';
import type { AuthInfo } from '../protocol.js';
import type { RequestExecutor, RequestTarget } from '../request.js';

/**
 * The requests besides tool calls that the gateway serves: for an upstream's
 * resources, templates and prompts, and `logging/setLevel`, which asks each
 * upstream that logs to log at a level (one request per upstream on the
 * request path, the level as its `target`).
 */
export type FeatureMethod =
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read'
  | 'resources/subscribe'
  | 'resources/unsubscribe'
  | 'prompts/list'
  | 'prompts/get'
  | 'completion/complete'
  | 'logging/setLevel';

/**
 * One request for what an upstream offers besides tools, as the `listFeatures`
 * hook (and the `featureAccess` and `featureResult` adapters) see it; a
 * feature request's `RequestContext` carries these fields too.
 */
export interface FeatureContext {
  readonly method: FeatureMethod;
  /**
   * The upstream whose resources or prompts are listed, or which serves the
   * request; undefined for an adopted server's own, which, like its tools,
   * belong to no upstream.
   */
  readonly upstream: string | undefined;
  /**
   * The resource URI (canonical, see `canonicalUri`), the prompt's exposed
   * name or the completion's reference; on a gateway's lists, the item
   * listed (URI, URI template or prompt name), asked item by item.
   */
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

/** What the server hands the feature handlers: `listFeatures`, and the one request path, each only when some plugin tapped it. */
export interface FeatureGuards {
  /** A reason to hide an item of a list, or undefined to show it. Requests are decided on the request path alone. */
  readonly access?: (ctx: FeatureContext) => string | undefined;
  /** The request path (`request` taps, `guard` wrappers, `response` taps) of one kind of request to one upstream, composed once. */
  readonly plan?: (target: Exclude<RequestTarget, { kind: 'tools/call' }>) => RequestExecutor;
}

/** What kind of item a feature batch holds. */
export type FeatureKind = 'prompt' | 'resource' | 'template';

/**
 * An upstream's prompts, resources and templates on their way in, as the
 * `importFeatures` hook sees them (at each (re)listing): taps drop items
 * (with a reason) or rewrite their definitions in place.
 */
export interface FeatureBatch {
  readonly source: ImportSource;
  /** The prompts still in the batch, under the names clients will see (the upstream's namespace applied). */
  readonly prompts: Prompt[];
  readonly resources: Resource[];
  readonly templates: ResourceTemplateType[];
  readonly skipped: SkippedTool[];
  /** Removes an item (a prompt by exposed name, a resource by URI, a template by URI template) and records why. */
  skip(kind: FeatureKind, id: string, reason: string, by: string): void;
}

export function createFeatureBatch(
  source: ImportSource,
  prompts: Prompt[],
  resources: Resource[],
  templates: ResourceTemplateType[],
): FeatureBatch {
  const batch: FeatureBatch = {
    source,
    prompts,
    resources,
    templates,
    skipped: [],
    skip(kind, id, reason, by) {
      const index =
        kind === 'prompt'
          ? prompts.findIndex((p) => p.name === id)
          : kind === 'resource'
            ? resources.findIndex((r) => r.uri === id)
            : templates.findIndex((t) => t.uriTemplate === id);
      if (index === -1) return;
      (kind === 'prompt' ? prompts : kind === 'resource' ? resources : templates).splice(index, 1);
      batch.skipped.push({ name: id, reason, by });
    },
  };
  return batch;
}
