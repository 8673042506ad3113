import type { FeatureBatch, SluiceTool, ToolCatalog } from '@sluice/core';
import type { UpstreamItems } from './policy.js';

type Features = Pick<UpstreamItems, 'resources' | 'templates' | 'prompts'>;

const NO_FEATURES: Features = Object.freeze({ resources: [], templates: [], prompts: [] });

/**
 * What each upstream serves now, as `AuthzPolicy.allowsLogLevel` asks it: its
 * tools from the tool catalog, and the resources, templates and prompts its
 * last (re)listing admitted (seen on `importFeatures`, after every other tap).
 * One snapshot per upstream, built when first asked after a change.
 */
export class ServedItems {
  private readonly features = new Map<string, Features>();
  private readonly snapshots = new Map<string, UpstreamItems>();

  constructor(private readonly tools: ToolCatalog) {
    tools.subscribe(() => this.snapshots.clear());
  }

  /** Keeps what an upstream's listing admitted; hands the batch on unchanged. */
  readonly admitted = (batch: FeatureBatch): FeatureBatch => {
    const { source } = batch;
    if (source.kind !== 'upstream') return batch;
    this.features.set(source.upstream, {
      resources: batch.resources.map((resource) => resource.uri),
      templates: batch.templates.map((template) => template.uriTemplate),
      prompts: batch.prompts.map((prompt) => prompt.name),
    });
    this.snapshots.delete(source.upstream);
    return batch;
  };

  of(upstream: string): UpstreamItems {
    let items = this.snapshots.get(upstream);
    if (items === undefined) {
      const tools: SluiceTool[] = [];
      for (const name of this.tools.names()) {
        const tool = this.tools.get(name);
        if (tool?.source.kind === 'upstream' && tool.source.upstream === upstream) tools.push(tool);
      }
      items = { upstream, tools, ...(this.features.get(upstream) ?? NO_FEATURES) };
      this.snapshots.set(upstream, items);
    }
    return items;
  }
}
