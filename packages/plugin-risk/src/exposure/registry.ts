import { CoreErrorCode, SluiceError } from '@sluice/core';
import type { ToolSource } from '@sluice/core';
import type { ToolShape } from '../definition.js';
import type { ExposureView } from './shadowing.js';
import { aliasKey } from './shadowing.js';

/** A tool as the registry knows it: the name clients see and the upstream's own name. */
export interface ExposedName {
  readonly name: string;
  readonly originalName: string;
  /** Kept for upstream tools, so that later imports can check what they reference. */
  readonly definition?: ToolShape;
}

export const LOCAL_SOURCE = 'local';

/**
 * Refuses an upstream named `local`: the ledger, the holds and the lines
 * give that name to the server's own tools, which such an upstream's would
 * be taken for.
 */
export function assertUpstreamName(upstream: string): void {
  if (upstream !== LOCAL_SOURCE) return;
  throw new SluiceError(
    CoreErrorCode.INVALID_OPTIONS,
    `The risk plugin cannot import an upstream named "${LOCAL_SOURCE}": its ledger and holds use that name for the server's own tools; rename the upstream`,
    { plugin: 'risk' },
  );
}

/** The source key of a tool: its upstream's configured name, or `local`. */
export function sourceKey(source: ToolSource): string {
  return source.kind === 'upstream' ? source.upstream : LOCAL_SOURCE;
}

/**
 * Which source exposes which names: what the shadowing rules and the
 * cross-tool scan compare a new tool against. An upstream's import carries
 * its whole list, so its entries are replaced; local tools accumulate.
 */
export class ExposureRegistry implements ExposureView {
  private readonly bySource = new Map<string, Map<string, ExposedName>>();
  private readonly exposed = new Map<string, string>();
  private readonly aliases = new Map<string, { name: string; server: string }>();
  private readonly owners = new Map<string, string>();
  private readonly upstreams = new Set<string>();
  /** Bumped on every change, so that what is derived from the names can be cached. */
  version = 0;

  constructor(configured: Iterable<string> = []) {
    for (const id of configured) this.upstreams.add(id);
  }

  /** Sets the names an upstream exposes now. */
  replace(server: string, tools: readonly ExposedName[]): void {
    this.version++;
    for (const tool of this.bySource.get(server)?.values() ?? []) this.forget(server, tool);
    this.bySource.set(server, new Map());
    this.add(server, tools);
  }

  /** Adds names to what a source exposes (local tools arrive one at a time). */
  add(server: string, tools: readonly ExposedName[]): void {
    this.version++;
    if (server !== LOCAL_SOURCE) this.upstreams.add(server);
    let own = this.bySource.get(server);
    if (!own) this.bySource.set(server, (own = new Map<string, ExposedName>()));
    for (const tool of tools) {
      own.set(tool.name, tool);
      this.exposed.set(tool.name, server);
      this.aliases.set(aliasKey(tool.name), { name: tool.name, server });
      this.owners.set(tool.name.toLowerCase(), server);
      this.owners.set(tool.originalName.toLowerCase(), server);
    }
  }

  /** Every tool exposed now by a source other than `server`, with its source. */
  *others(server: string): IterableIterator<{ readonly server: string; readonly tool: ExposedName }> {
    for (const [source, tools] of this.bySource) {
      if (source === server) continue;
      for (const tool of tools.values()) yield { server: source, tool };
    }
  }

  /** The source exposing a name now. */
  sourceOf(name: string): string | undefined {
    return this.exposed.get(name);
  }

  ownerOfAlias(alias: string): { readonly name: string; readonly server: string } | undefined {
    return this.aliases.get(alias);
  }

  ownerOfTool(name: string): string | undefined {
    return this.owners.get(name.toLowerCase());
  }

  get serverIds(): Iterable<string> {
    return this.upstreams;
  }

  /** Every exposed and upstream name, lower-cased. */
  names(): IterableIterator<string> {
    return this.owners.keys();
  }

  private forget(server: string, tool: ExposedName): void {
    const drop = <V>(map: Map<string, V>, key: string, owner: (v: V) => string) => {
      const value = map.get(key);
      if (value !== undefined && owner(value) === server) map.delete(key);
    };
    drop(this.exposed, tool.name, (v) => v);
    drop(this.aliases, aliasKey(tool.name), (v) => v.server);
    drop(this.owners, tool.name.toLowerCase(), (v) => v);
    drop(this.owners, tool.originalName.toLowerCase(), (v) => v);
  }
}
