import type { Client } from '@modelcontextprotocol/client';
import { UriTemplate } from '@modelcontextprotocol/server';
import type { Prompt, Resource, ResourceTemplateType, ServerCapabilities } from '@modelcontextprotocol/server';
import { messageOf } from '@sluice/core';
import type { Logger } from '@sluice/core';
import type { RoundStateSeal } from '../round-state.js';
import { CoreErrorCode, SluiceError } from '@sluice/core';
import type { ImportSource, SkippedTool } from '@sluice/core';
import type { FeatureBatch, FeatureKind } from '@sluice/core';
import { createFeatureBatch } from '@sluice/core';
import type { ChangeAudience, FeatureGuards, ListChange } from '@sluice/core/internal';
import { featureRequest, itemsChanged } from '@sluice/core/internal';
import type { LogLevel, LogMessage } from '@sluice/core/internal';
import { levelRank } from '@sluice/core/internal';
import { ResourceRouter } from './resource-router.js';
import { canonicalUri } from '@sluice/core';
import type { CallerIdentity } from '@sluice/core';

/** What the catalog needs from one upstream. */
export interface FeatureLink {
  readonly name: string;
  /** Per-request limit, in ms. */
  readonly timeoutMs: number;
  /** The connected client, or undefined while the upstream is down. */
  connected(): Client | undefined;
  redact(text: string): string;
  /** The connection for 2026-07-28 callers, or undefined (the upstream speaks only 2025-11-25). */
  modernLane?(): Promise<Client | undefined>;
  /**
   * The caller's own connection, when the upstream is reached with each caller's grant (`token_exchange`,
   * `per_user`); `modern` asks for one speaking 2026-07-28, which the upstream may not.
   */
  callerClient?(caller: CallerIdentity | undefined, modern?: boolean): Promise<Client> | undefined;
  /** Seals an upstream's `requestState` between rounds. */
  readonly roundSeal?: RoundStateSeal;
}

/** What an upstream offers besides tools, as listed at (re)connection and on each `list_changed`. */
export interface FeatureSnapshot {
  readonly capabilities: ServerCapabilities;
  readonly resources: readonly Resource[];
  readonly templates: readonly ResourceTemplateType[];
  /** The upstream's prompts under their own names. */
  readonly prompts: readonly Prompt[];
  /** Maps an upstream prompt name to the name clients see (the upstream's namespace, as for tools). */
  readonly exposedName: (original: string) => string;
  /** The upstream as import taps see it. */
  readonly source: ImportSource;
  /** Why the upstream's own settings leave an item out (a prompt by its upstream name), or undefined. */
  readonly exclusion?: (kind: FeatureKind, id: string) => string | undefined;
  /** Why the upstream's own settings refuse a request for a (canonical) resource URI, or undefined. */
  readonly denial?: (uri: string) => string | undefined;
}

interface Entry {
  readonly link: FeatureLink;
  /** What a plugin kept out of this upstream: never reached through the sole-upstream fallback either. */
  refused: { readonly uris: ReadonlySet<string>; readonly templates: readonly UriTemplate[] };
  /** The upstream's `denyResources`, asked of every URI a request names, a template's URIs included. */
  denial: ((uri: string) => string | undefined) | undefined;
  capabilities: ServerCapabilities;
  resources: Resource[];
  templates: ResourceTemplateType[];
  prompts: Prompt[];
}

/** Whether a list request may see one item of an upstream (by URI, URI template or exposed prompt name). */
export type Visible = (upstream: string, item: string) => boolean;

/** The lists besides tools an upstream can announce as changed. */
export type FeatureList = 'resources' | 'prompts';

/**
 * How many of an upstream's items in a list are asked about when it says the
 * list changed and the gateway sees no difference: enough to find a caller
 * who sees some of them, few enough that each connection costs a bounded few
 * checks however long the list is.
 */
const ANNOUNCED_SAMPLE = 100;

/** One item of a list, as the list's filter (`listFeatures`) is asked about it. */
interface ListedItem {
  readonly method: 'resources/list' | 'resources/templates/list' | 'prompts/list';
  /** The canonical URI, URI template or exposed prompt name. */
  readonly target: string;
}

/** A prompt clients see, and where it comes from. */
export interface PromptRoute {
  readonly link: FeatureLink;
  readonly original: string;
}

/**
 * Resources, resource templates and prompts of every imported upstream,
 * merged: prompts under their namespaced names, resources under their own
 * URIs routed by owner (see `ResourceRouter`). Tells connected clients when
 * a list changes, and relays resource updates and log messages.
 */
export class FeatureCatalog {
  private readonly entries = new Map<string, Entry>();
  private readonly router = new ResourceRouter();
  private readonly promptRoutes = new Map<string, PromptRoute & { readonly definition: Prompt }>();
  private readonly subscriptions = new Map<string, number>();
  /** The level each connected client asked for, and the upstreams that admitted it, until it leaves. */
  private readonly clientLevels = new Map<
    object,
    { readonly level: LogLevel; readonly upstreams: ReadonlySet<string> }
  >();
  /** The level each upstream was last set to: the most verbose one that a client it admitted asked for. */
  private readonly upstreamLevels = new Map<string, LogLevel>();

  constructor(
    private readonly notify: (change: ListChange) => void,
    private readonly logger: Logger,
    /** The `importFeatures` hook, when some plugin tapped it. */
    private readonly admit?: (batch: FeatureBatch) => Promise<FeatureBatch>,
    /** The `listFeatures` hook, when some plugin tapped it: who hears of a change is asked of it. */
    private readonly access?: FeatureGuards['access'],
  ) {}

  /**
   * Replaces what an upstream offers; returns what was refused (conflicts),
   * each naming both upstreams. A client hears that a list changed when an
   * item of it that its caller may see was added, removed or changed. Of a
   * list the upstream `announced` changed with no difference the gateway can
   * see (an upstream may serve each connection its own list), the clients
   * whose caller may see some of this upstream's items in it hear; a caller
   * who may see none of them never does.
   */
  async update(
    link: FeatureLink,
    snapshot: FeatureSnapshot,
    announced: readonly FeatureList[] = [],
  ): Promise<SkippedTool[]> {
    const originals = new Map<Prompt, string>();
    const offered = snapshot.prompts.map((prompt) => {
      const definition = { ...prompt, name: snapshot.exposedName(prompt.name) };
      originals.set(definition, prompt.name);
      return definition;
    });
    const { resources, invalid } = canonicalResources(snapshot.resources, link.name);
    let batch = createFeatureBatch(snapshot.source, offered, resources, [...snapshot.templates]);
    batch.skipped.push(...invalid);
    excludeBySettings(batch, snapshot, originals);
    if (this.admit !== undefined) batch = await this.admit(batch);
    const before = this.entries.get(link.name);
    const conflicts: SkippedTool[] = [];
    const claimed = this.router.claim(link.name, batch.resources, batch.templates);
    for (const conflict of claimed.conflicts)
      conflicts.push({ name: conflict.id, reason: conflict.reason, by: 'core' });
    for (const [name, route] of this.promptRoutes) if (route.link.name === link.name) this.promptRoutes.delete(name);
    const prompts: Prompt[] = [];
    for (const definition of batch.prompts) {
      const exposed = definition.name;
      const original = originals.get(definition);
      if (original === undefined)
        throw new SluiceError(
          CoreErrorCode.INVALID_STATE,
          `An importFeatures tap replaced the prompt object "${exposed}": change prompts in place or skip them`,
          { hook: 'importFeatures' },
        );
      const holder = this.promptRoutes.get(exposed);
      if (holder !== undefined) {
        conflicts.push({
          name: exposed,
          reason: `Prompt "${exposed}" is offered by upstreams "${holder.link.name}" and "${link.name}"; "${holder.link.name}" keeps it (give one a namespace)`,
          by: 'core',
        });
        continue;
      }
      this.promptRoutes.set(exposed, { link, original, definition });
      prompts.push(definition);
    }
    this.entries.set(link.name, {
      link,
      refused: refusedOf(batch),
      denial: snapshot.denial,
      capabilities: snapshot.capabilities,
      resources: claimed.resources,
      templates: claimed.templates,
      prompts,
    });
    for (const conflict of conflicts) {
      this.logger.warn(
        { event: 'upstream.feature_conflict', upstream: link.name, item: conflict.name, reason: conflict.reason },
        conflict.reason,
      );
    }
    const level = this.upstreamLevels.get(link.name);
    if (level !== undefined && snapshot.capabilities.logging !== undefined) this.setUpstreamLevel(link, level);
    const touchedResources = [
      ...touched('resources/list', before?.resources, claimed.resources, (r) => r.uri),
      ...touched('resources/templates/list', before?.templates, claimed.templates, (t) => t.uriTemplate),
    ];
    this.tell('resources', link.name, touchedResources, announced.includes('resources'));
    const touchedPrompts = touched('prompts/list', before?.prompts, prompts, (p) => p.name);
    this.tell('prompts', link.name, touchedPrompts, announced.includes('prompts'));
    return [...batch.skipped, ...conflicts];
  }

  /**
   * Tells the clients that may see one of the `changed` items of an upstream's list that the list changed; with none
   * changed but the list `announced`, those that may see one of its first `ANNOUNCED_SAMPLE` items now (a caller
   * who sees only later ones misses no difference: there is none in the gateway's list).
   */
  private tell(list: FeatureList, upstream: string, changed: readonly ListedItem[], announced: boolean): void {
    const items = changed.length > 0 ? changed : announced ? this.sampleOf(list, upstream) : undefined;
    if (items !== undefined) this.notify(itemsChanged(list, (audience) => this.seesAny(audience, upstream, items)));
  }

  /** The first `ANNOUNCED_SAMPLE` of an upstream's items in a list, resources before templates. */
  private sampleOf(list: FeatureList, upstream: string): ListedItem[] {
    const entry = this.entries.get(upstream);
    if (entry === undefined) return [];
    const items: ListedItem[] =
      list === 'prompts'
        ? entry.prompts.slice(0, ANNOUNCED_SAMPLE).map((p) => ({ method: 'prompts/list', target: p.name }))
        : entry.resources.slice(0, ANNOUNCED_SAMPLE).map((r) => ({ method: 'resources/list', target: r.uri }));
    if (list === 'resources')
      for (const t of entry.templates.slice(0, ANNOUNCED_SAMPLE - items.length))
        items.push({ method: 'resources/templates/list', target: t.uriTemplate });
    return items;
  }

  /**
   * Whether a caller's list would show any of these items of an upstream: the `listFeatures` filter its list
   * requests meet, without their headers (which the client chooses per request); with no filter, every item is
   * shown. A tap that throws shows nothing.
   */
  private seesAny(audience: ChangeAudience, upstream: string, items: readonly ListedItem[]): boolean {
    const { access } = this;
    if (access === undefined) return true;
    const base = featureRequest('resources/list', audience.authInfo, undefined, audience.transport, this.logger);
    try {
      return items.some(
        (item) => access({ ...base, method: item.method, upstream, target: item.target }) === undefined,
      );
    } catch (error) {
      this.logger.debug(
        { event: 'upstream.change_unseen', upstream, err: error },
        `a listFeatures tap failed deciding who hears of a list change; that caller is not told: ${messageOf(error)}`,
      );
      return false;
    }
  }

  /** What the gateway may advertise: a capability only when some upstream provides it. */
  capabilities(): ServerCapabilities {
    const caps: ServerCapabilities = {};
    for (const { capabilities } of this.entries.values()) {
      if (capabilities.resources) {
        caps.resources = {
          listChanged: true,
          ...(capabilities.resources.subscribe || caps.resources?.subscribe ? { subscribe: true } : {}),
        };
      }
      if (capabilities.prompts) caps.prompts = { listChanged: true };
      if (capabilities.completions) caps.completions = {};
      if (capabilities.logging) caps.logging = {};
    }
    return caps;
  }

  /** The resources a request may see: `visible` is asked per upstream and item (its canonical URI). */
  resources(visible: Visible): Resource[] {
    return this.collect(
      visible,
      (entry) => entry.resources,
      (r) => r.uri,
    );
  }

  /** The templates a request may see: `visible` is asked per upstream and item (its URI template). */
  templates(visible: Visible): ResourceTemplateType[] {
    return this.collect(
      visible,
      (entry) => entry.templates,
      (t) => t.uriTemplate,
    );
  }

  /** The prompts a request may see: `visible` is asked per upstream and item (its exposed name). */
  prompts(visible: Visible): Prompt[] {
    return this.collect(
      visible,
      (entry) => entry.prompts,
      (p) => p.name,
    );
  }

  /**
   * The upstream that serves a URI: its owner, or the only upstream with
   * resources when no upstream claims the URI (so that its own answer,
   * "not found" included, reaches the client as it would directly).
   */
  resourceOwner(uri: string): FeatureLink | undefined {
    const owner = this.router.ownerOf(uri);
    if (owner !== undefined) {
      const entry = this.entries.get(owner);
      return entry === undefined || kept(entry, uri) ? undefined : entry.link;
    }
    const serving = [...this.entries.values()].filter((e) => e.capabilities.resources !== undefined);
    const [only, ...others] = serving;
    if (only === undefined || others.length > 0) return undefined;
    return kept(only, uri) ? undefined : only.link;
  }

  /** The upstream whose template (or listed URI) a `ref/resource` completion names. */
  templateOwner(uri: string): FeatureLink | undefined {
    const owner = this.router.ownerOfTemplate(uri);
    return owner === undefined ? undefined : this.entries.get(owner)?.link;
  }

  prompt(name: string): PromptRoute | undefined {
    return this.promptRoutes.get(name);
  }

  /** Whether an upstream announced subscriptions. */
  canSubscribe(link: FeatureLink): boolean {
    return this.entries.get(link.name)?.capabilities.resources?.subscribe === true;
  }

  /**
   * Counts a client's subscription; the first one for a URI subscribes upstream, with `meta` (the
   * request's `outgoingMeta`) as its `_meta`.
   */
  async subscribe(link: FeatureLink, uri: string, meta?: Record<string, unknown>): Promise<void> {
    const count = this.subscriptions.get(uri) ?? 0;
    if (count === 0)
      await connectedOrThrow(link).subscribeResource(withMeta({ uri }, meta), { timeout: link.timeoutMs });
    this.subscriptions.set(uri, count + 1);
  }

  /** Uncounts a client's subscription; the last one unsubscribes upstream, with `meta` as its `_meta`. */
  async unsubscribe(link: FeatureLink, uri: string, meta?: Record<string, unknown>): Promise<void> {
    const count = this.subscriptions.get(uri) ?? 0;
    if (count <= 1) {
      this.subscriptions.delete(uri);
      if (count === 1)
        await connectedOrThrow(link).unsubscribeResource(withMeta({ uri }, meta), { timeout: link.timeoutMs });
      return;
    }
    this.subscriptions.set(uri, count - 1);
  }

  /** An upstream said a resource changed: only the clients subscribed to it hear. */
  resourceUpdated(upstream: string, uri: string): void {
    const canonical = canonicalOrUndefined(uri);
    if (canonical === undefined || this.router.ownerOf(canonical) !== upstream) return;
    this.notify({ resourceUpdated: canonical, subscribersOnly: true });
  }

  /** Relays a log message an upstream sent outside any call to clients, each filtered by its own level. */
  broadcastLog(params: LogMessage): void {
    this.notify({ log: params });
  }

  /** The upstreams that take a log level (they announced logging), by name. */
  loggingUpstreams(): string[] {
    const names: string[] = [];
    for (const [name, entry] of this.entries) if (entry.capabilities.logging !== undefined) names.push(name);
    return names;
  }

  /**
   * A client set its log level, and `upstreams` admitted it (the request
   * path of `logging/setLevel` for each): each of them is set to the most
   * verbose level a connected client it admitted asked for. Each client
   * still receives only what its own level lets through.
   */
  levelRequested(client: object, level: LogLevel, upstreams: readonly string[]): void {
    this.clientLevels.set(client, { level, upstreams: new Set(upstreams) });
    this.applyLevels();
  }

  /**
   * A client that set a level left: upstreams go back to the most verbose
   * level the clients still connected asked for. When none is left, they keep
   * the last one (the protocol has no way to unset a level).
   */
  clientLeft(client: object): void {
    if (this.clientLevels.delete(client)) this.applyLevels();
  }

  private applyLevels(): void {
    for (const [name, entry] of this.entries) {
      if (entry.capabilities.logging === undefined) continue;
      let lowest: LogLevel | undefined;
      for (const { level, upstreams } of this.clientLevels.values())
        if (upstreams.has(name) && (lowest === undefined || levelRank(level) < levelRank(lowest))) lowest = level;
      if (lowest === undefined || lowest === this.upstreamLevels.get(name)) continue;
      this.upstreamLevels.set(name, lowest);
      this.setUpstreamLevel(entry.link, lowest);
    }
  }

  private setUpstreamLevel(link: FeatureLink, level: LogLevel): void {
    const client = link.connected();
    if (client === undefined) return;
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- see log-types.ts: 2025-11-25 logging is relayed
    client.setLoggingLevel(level, { timeout: link.timeoutMs }).catch((error: unknown) => {
      this.logger.debug(
        { event: 'upstream.set_level_failed', upstream: link.name, error: link.redact(messageOf(error)) },
        'setting the log level of an upstream failed',
      );
    });
  }

  private collect<T>(visible: Visible, pick: (entry: Entry) => readonly T[], id: (item: T) => string): T[] {
    const all: T[] = [];
    for (const [name, entry] of this.entries)
      for (const item of pick(entry)) if (visible(name, id(item))) all.push(item);
    return all;
  }
}

/**
 * Whether a URI is kept out of an upstream: refused at import (by the upstream's settings or a plugin), or
 * denied by its `denyResources`; a URI that one of its templates matches is no exception.
 */
function kept(entry: Entry, uri: string): boolean {
  const { refused } = entry;
  if (refused.uris.has(uri) || refused.templates.some((t) => t.match(uri) !== null)) return true;
  return entry.denial?.(uri) !== undefined;
}

/** An upstream's resources under their canonical URIs; those whose URI names no resource are left out. */
function canonicalResources(
  listed: readonly Resource[],
  upstream: string,
): { resources: Resource[]; invalid: SkippedTool[] } {
  const resources: Resource[] = [];
  const invalid: SkippedTool[] = [];
  for (const resource of listed) {
    try {
      const uri = canonicalUri(resource.uri);
      resources.push(uri === resource.uri ? resource : { ...resource, uri });
    } catch (error) {
      invalid.push({
        name: resource.uri.slice(0, 200),
        reason: `Upstream "${upstream}" lists a resource whose URI is refused: ${messageOf(error)}`,
        by: 'core',
      });
    }
  }
  return { resources, invalid };
}

function canonicalOrUndefined(uri: string): string | undefined {
  try {
    return canonicalUri(uri);
  } catch {
    return undefined;
  }
}

/** Request params, with `_meta` when there is one to send. */
function withMeta<P extends object>(params: P, meta: Record<string, unknown> | undefined): P {
  return meta === undefined ? params : { ...params, _meta: meta };
}

function connectedOrThrow(link: FeatureLink): Client {
  const client = link.connected();
  if (client === undefined) throw new Error(`Upstream "${link.name}" is not connected right now`);
  return client;
}

/** Leaves out what the upstream's `allow*` / `deny*` settings exclude, before any plugin sees the batch. */
function excludeBySettings(batch: FeatureBatch, snapshot: FeatureSnapshot, originals: Map<Prompt, string>): void {
  const exclusion = snapshot.exclusion;
  if (exclusion === undefined) return;
  for (const prompt of [...batch.prompts]) {
    const reason = exclusion('prompt', originals.get(prompt) ?? prompt.name);
    if (reason !== undefined) batch.skip('prompt', prompt.name, reason, 'core');
  }
  for (const resource of [...batch.resources]) {
    const reason = exclusion('resource', resource.uri);
    if (reason !== undefined) batch.skip('resource', resource.uri, reason, 'core');
  }
  for (const template of [...batch.templates]) {
    const reason = exclusion('template', template.uriTemplate);
    if (reason !== undefined) batch.skip('template', template.uriTemplate, reason, 'core');
  }
}

/** The URIs and templates the upstream's settings or the `importFeatures` hook kept out of a batch. */
function refusedOf(batch: FeatureBatch): Entry['refused'] {
  const uris = new Set<string>();
  const templates: UriTemplate[] = [];
  const kept = new Set(batch.templates.map((t) => t.uriTemplate));
  for (const skipped of batch.skipped) {
    if (UriTemplate.isTemplate(skipped.name) && !kept.has(skipped.name)) {
      try {
        templates.push(new UriTemplate(skipped.name));
        continue;
      } catch {
        // Not a valid template after all: keep it out as a URI.
      }
    }
    uris.add(skipped.name);
  }
  return { uris, templates };
}

/** The items of a list added, removed or changed between two listings of one upstream. */
function touched<T>(
  method: ListedItem['method'],
  before: readonly T[] | undefined,
  after: readonly T[],
  id: (item: T) => string,
): ListedItem[] {
  const old = new Map((before ?? []).map((item) => [id(item), item]));
  const items: ListedItem[] = [];
  for (const item of after) {
    const target = id(item);
    const was = old.get(target);
    old.delete(target);
    if (was === undefined || (was !== item && JSON.stringify(was) !== JSON.stringify(item)))
      items.push({ method, target });
  }
  for (const target of old.keys()) items.push({ method, target });
  return items;
}
