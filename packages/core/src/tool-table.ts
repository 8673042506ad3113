import { identityOf } from './auth/identity.js';
import type { Executor, Headers, ListContext } from './context.js';
import { CoreErrorCode, SluiceError, messageOf } from './errors.js';
import type { CoreHooks } from './hooks.js';
import type { Logger } from './logger.js';
import type { Pipeline, RegisteredTool } from './pipeline.js';
import type { Tool } from './protocol.js';
import type { CompiledSchema } from './schema.js';
import type { ImportBatch, ImportSource, SkippedTool, SluiceTool } from './tool.js';
import { createImportBatch } from './tool.js';
import { itemsChanged } from './transport-hooks.js';
import type { ChangeAudience, ItemsChanged } from './transport-hooks.js';

/** The outcome of putting tools through the `import` hook. */
export interface ImportResult {
  /** The names under which the tools are now exposed. */
  readonly imported: readonly string[];
  readonly skipped: readonly SkippedTool[];
}

/** A tool about to enter the server, with what runs it. */
export interface ToolDraft {
  readonly tool: SluiceTool;
  readonly base: Executor;
  readonly input?: CompiledSchema;
}

/** What changed in the exposed tools, once the core has settled it. */
export interface CatalogChange {
  /** Tools exposed by this change (new, or replacing a tool of the same name and source), under their final names. */
  readonly added: readonly SluiceTool[];
  /** Tools no longer exposed. */
  readonly removed: readonly SluiceTool[];
  /** Tools of this batch that were kept out (by a plugin, or by the core on a name collision). */
  readonly skipped: readonly SkippedTool[];
}

/** The tools a server exposes now, as plugins may look them up. */
export interface ToolCatalog {
  /** The exposed tool of that name, or undefined. */
  get(name: string): SluiceTool | undefined;
  /** The exposed tool that upstream `upstream` lists as `originalName`, whatever name it is exposed under. */
  byOrigin(upstream: string, originalName: string): SluiceTool | undefined;
  /** The compiled input schema the core validates that tool's arguments with; undefined for tools whose upstream validates. */
  inputOf(name: string): CompiledSchema | undefined;
  /** The names exposed now. */
  names(): string[];
  /**
   * What `tools/list` shows to a request with these headers, caller and
   * transport: the exposed definitions after every plugin's `listTools` tap.
   * Pass a call's context to see the tools its caller may see.
   */
  list(request: Partial<Pick<ListContext, 'headers' | 'authInfo' | 'transport'>>): Tool[];
  /**
   * Calls `listener` after the core has settled each change to the exposed
   * tools: a batch admitted (name collisions resolved) or tools removed.
   * Returns a function that stops the calls.
   */
  subscribe(listener: (change: CatalogChange) => void): () => void;
  /**
   * Tells connected clients that what `tools/list` shows has changed, when a
   * plugin's own state changes it (a tool held for review, then approved).
   * With `names`, only the callers that may see one of those exposed tools
   * are told (names not exposed now are passed over; none left tells no
   * one); without, every client is.
   */
  notifyChanged(names?: readonly string[]): void;
}

export interface ToolTableOptions {
  readonly hooks: CoreHooks;
  readonly logger: Logger;
  /** Throws when the server is closed. */
  readonly assertOpen: () => void;
  /** Tells clients that the tool list changed: all of it (a plugin said so), or some tools in it. */
  readonly changed: (change: 'tools' | ItemsChanged) => void;
}

/**
 * The headers a list of what a caller may call is asked with, rather than
 * what its `tools/list` shows: tool search leaves such a list whole (it reads
 * the same symbol), so that a caller who finds tools by search hears of the
 * tools it may find.
 */
const CATALOG_LIST = Symbol.for('dev.sluice/catalog-list');
/**
 * Marks the same headers as a question of who hears of a change. A tap that
 * hides a tool from every caller alike (a hold) leaves it in: each caller
 * that may otherwise see the tool saw it before the change or sees it after,
 * and is told. A symbol never comes off the wire.
 */
const LIST_CHANGE = Symbol.for('dev.sluice/list-change');
const CATALOG_HEADERS: Headers = Object.freeze(
  Object.defineProperties({}, { [CATALOG_LIST]: { value: true }, [LIST_CHANGE]: { value: true } }),
);

/**
 * The tools a server exposes: admission through the `import` hook, name
 * collisions, removal, the `tools/list` cache and filter, and the queue of
 * local registrations still pending.
 */
export class ToolTable {
  /** The view plugins get as `PluginApi.tools`. */
  readonly catalog: ToolCatalog;
  private pipeline: Pipeline | undefined;
  private readonly registered = new Map<string, RegisteredTool>();
  /** upstream → name at the upstream → exposed name. */
  private readonly origins = new Map<string, Map<string, string>>();
  /**
   * Tools the import hook kept out, by source and name: a name skipped again
   * replaces its entry, a name admitted later drops it, and an upstream's are
   * those of its last listing (it lists every tool each time), so re-listing
   * never grows them.
   */
  private readonly skippedTools = new Map<string, Map<string, SkippedTool>>();
  private readonly listeners = new Set<(change: CatalogChange) => void>();
  private listCache: Tool[] | undefined;
  private pending: Promise<void> = Promise.resolve();
  private pendingCount = 0;
  private readonly pendingNames = new Set<string>();
  /** Registration failures not yet reported by `ready()`, as thrown (a SluiceError, usually). */
  private readonly registrationErrors: Error[] = [];

  constructor(private readonly options: ToolTableOptions) {
    this.catalog = Object.freeze({
      get: (name: string) => this.registered.get(name)?.tool,
      byOrigin: (upstream: string, originalName: string) => {
        const name = this.origins.get(upstream)?.get(originalName);
        return name === undefined ? undefined : this.registered.get(name)?.tool;
      },
      inputOf: (name: string) => this.registered.get(name)?.input,
      names: () => [...this.registered.keys()],
      list: (request: Partial<Pick<ListContext, 'headers' | 'authInfo' | 'transport'>>) => this.list(request),
      subscribe: (listener: (change: CatalogChange) => void) => {
        if (typeof listener !== 'function') {
          throw new SluiceError(CoreErrorCode.INVALID_STATE, 'tools.subscribe() takes a function');
        }
        this.listeners.add(listener);
        return () => void this.listeners.delete(listener);
      },
      notifyChanged: (names?: readonly string[]) => this.notifyChanged(names),
    });
  }

  /** Binds the pipeline the tools' executors are composed with; done once the hooks are locked. */
  bind(pipeline: Pipeline): void {
    this.pipeline = pipeline;
  }

  get(name: string): RegisteredTool | undefined {
    return this.registered.get(name);
  }

  /** Queues a local tool: the name is taken now, the tool exposed when the queue reaches it. */
  register(draft: ToolDraft): void {
    const name = draft.tool.name;
    if (this.registered.has(name) || this.pendingNames.has(name)) {
      throw new SluiceError(CoreErrorCode.DUPLICATE_TOOL, `A tool named "${name}" is already registered`);
    }
    this.pendingNames.add(name);
    this.enqueue(async () => {
      const result = await this.admit({ kind: 'local' }, [draft]).finally(() => this.pendingNames.delete(name));
      for (const skipped of result.skipped) {
        this.options.logger.warn(
          { event: 'tool.skipped', tool: skipped.name, reason: skipped.reason, by: skipped.by },
          'local tool was not exposed',
        );
      }
    });
  }

  /** Whether local registrations are still pending. */
  get busy(): boolean {
    return this.pendingCount > 0;
  }

  /** Resolves when every queued registration is done; rejects with the first failure. */
  async ready(): Promise<void> {
    await this.settled();
    const failure = this.registrationErrors.shift();
    if (failure !== undefined) throw failure;
  }

  /** Waits for pending registrations without reporting their failures. */
  async settled(): Promise<void> {
    while (this.pendingCount > 0) await this.pending;
  }

  /**
   * Puts drafts through the `import` hook and exposes what it keeps. Used for
   * local tools, upstream import and adopted servers; replaces tools of the
   * same name from the same source.
   */
  async admit(source: ImportSource, drafts: readonly ToolDraft[]): Promise<ImportResult> {
    this.options.assertOpen();
    const pipeline = this.pipeline;
    if (pipeline === undefined) throw new SluiceError(CoreErrorCode.INVALID_STATE, 'The tool table has no pipeline');
    const bases = new Map<SluiceTool, ToolDraft>(drafts.map((d) => [d.tool, d]));
    const nativeNames = new Map<SluiceTool, string>(drafts.map((d) => [d.tool, d.tool.name]));
    let batch: ImportBatch = createImportBatch(
      source,
      drafts.map((d) => d.tool),
    );
    if (pipeline.importUsed) batch = await this.options.hooks.import.promise(batch);
    const added: SluiceTool[] = [];
    /** The tools this batch adds or changes, old and new definitions: a tool listed again unchanged is not news. */
    const touched: SluiceTool[] = [];
    const skipped: SkippedTool[] = [...batch.skipped];
    for (const tool of batch.tools) {
      const draft = bases.get(tool);
      if (!draft) {
        throw new SluiceError(
          CoreErrorCode.INVALID_STATE,
          `An import tap replaced the tool object "${tool.name}": mutate tools in place or skip them`,
          { hook: 'import' },
        );
      }
      // An adopted server's tools keep the names it gave them: clients call them by those.
      if (source.kind === 'adopted') tool.name = nativeNames.get(tool) ?? tool.name;
      tool.definition = { ...tool.definition, name: tool.name };
      const existing = this.registered.get(tool.name);
      if (existing && !sameSource(existing.tool.source, source)) {
        skipped.push({
          name: tool.name,
          reason: `Name collision: "${tool.name}" is already exposed by another source`,
          by: 'core',
        });
        continue;
      }
      Object.freeze(tool);
      const executor = pipeline.compose(draft.base, tool);
      if (existing) this.forgetOrigin(existing.tool);
      this.registered.set(tool.name, { tool, executor, input: draft.input, plan: pipeline.plan(tool) });
      this.rememberOrigin(tool);
      added.push(tool);
      if (existing === undefined) touched.push(tool);
      else if (!sameDefinition(existing.tool, tool)) touched.push(tool, existing.tool);
    }
    this.keepSkipped(source, skipped, added);
    if (added.length > 0) this.listCache = undefined;
    if (touched.length > 0) this.changed(touched);
    this.publish({ added, removed: [], skipped });
    return { imported: added.map((tool) => tool.name), skipped };
  }

  /** Stops exposing tools (an upstream dropped them). */
  remove(names: Iterable<string>): void {
    const removed: SluiceTool[] = [];
    for (const name of names) {
      const entry = this.registered.get(name);
      if (entry === undefined) continue;
      this.registered.delete(name);
      this.forgetOrigin(entry.tool);
      removed.push(entry.tool);
    }
    if (removed.length === 0) return;
    this.changed(removed);
    this.publish({ added: [], removed, skipped: [] });
  }

  /** The tools exposed now. */
  tools(): SluiceTool[] {
    return [...this.registered.values()].map((r) => r.tool);
  }

  /** Tools the import hook keeps out, with reasons: an upstream's as of its last listing. */
  skipped(): SkippedTool[] {
    return [...this.skippedTools.values()].flatMap((bySource) => [...bySource.values()]);
  }

  private keepSkipped(source: ImportSource, skipped: readonly SkippedTool[], added: readonly SluiceTool[]): void {
    const key = source.kind === 'upstream' ? `upstream:${source.upstream}` : source.kind;
    let bySource = this.skippedTools.get(key);
    if (bySource === undefined || source.kind === 'upstream')
      this.skippedTools.set(key, (bySource = new Map<string, SkippedTool>()));
    for (const tool of added) bySource.delete(tool.name);
    for (const entry of skipped) bySource.set(entry.name, entry);
  }

  /** What `tools/list` shows to a request. */
  list(context: Partial<ListContext> = {}): Tool[] {
    this.listCache ??= [...this.registered.values()].map((r) => r.tool.definition);
    return this.pipeline?.listToolsUsed ? this.filter([...this.listCache], context) : this.listCache;
  }

  /** Runs the `listTools` hook over a list of definitions; `context.toolOf` defaults to the exposed tools. */
  filter(tools: Tool[], context: Partial<ListContext> = {}): Tool[] {
    if (!this.pipeline?.listToolsUsed) return tools;
    const ctx: ListContext = {
      headers: context.headers ?? {},
      authInfo: context.authInfo,
      auth: identityOf(context.authInfo),
      transport: context.transport ?? 'in-process',
      logger: context.logger ?? this.options.logger,
      toolOf: context.toolOf ?? ((name) => this.registered.get(name)?.tool),
    };
    return this.options.hooks.listTools.call(tools, ctx);
  }

  /** A plugin's own change: to these exposed tools, or, without names, to the whole list. */
  private notifyChanged(names: readonly string[] | undefined): void {
    if (names === undefined) {
      this.changed();
      return;
    }
    const given: unknown = names;
    if (!Array.isArray(given) || given.some((name) => typeof name !== 'string')) {
      throw new SluiceError(
        CoreErrorCode.INVALID_STATE,
        'tools.notifyChanged() takes an array of tool names, or nothing',
      );
    }
    const touched = [...new Set(names)].flatMap((name) => this.registered.get(name)?.tool ?? []);
    if (touched.length > 0) this.changed(touched);
  }

  /** Tells clients of a change to these tools (old and new definitions), or, without them, of the whole list. */
  private changed(touched?: readonly SluiceTool[]): void {
    this.listCache = undefined;
    if (touched === undefined) this.options.changed('tools');
    else this.options.changed(itemsChanged('tools', (audience) => this.mayCallAny(audience, touched)));
  }

  /**
   * Whether a caller may call any of these tools: the `listTools` filter of
   * what it may call, over them alone (a removed tool is still known by its
   * object), as the taps decide after the change, asked as a question of who
   * hears of it (`LIST_CHANGE`). A filter that throws shows nothing.
   */
  private mayCallAny(audience: ChangeAudience, touched: readonly SluiceTool[]): boolean {
    const byName = new Map(touched.map((tool) => [tool.name, tool]));
    try {
      const seen = this.filter(
        touched.map((tool) => tool.definition),
        {
          headers: CATALOG_HEADERS,
          authInfo: audience.authInfo,
          transport: audience.transport,
          toolOf: (name) => this.registered.get(name)?.tool ?? byName.get(name),
        },
      );
      return seen.some((tool) => byName.has(tool.name));
    } catch (error) {
      this.options.logger.debug(
        { event: 'tools.change_unseen', err: error },
        `a listTools tap failed deciding who hears of a tool list change; that caller is not told: ${messageOf(error)}`,
      );
      return false;
    }
  }

  private publish(change: CatalogChange): void {
    if (change.added.length === 0 && change.removed.length === 0 && change.skipped.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.options.logger.error(
          { event: 'tools.subscriber_failed', err: error },
          `a tool catalog subscriber failed: ${messageOf(error)}`,
        );
      }
    }
  }

  private rememberOrigin(tool: SluiceTool): void {
    const { source } = tool;
    if (source.kind !== 'upstream') return;
    let names = this.origins.get(source.upstream);
    if (names === undefined) this.origins.set(source.upstream, (names = new Map<string, string>()));
    names.set(source.originalName, tool.name);
  }

  private forgetOrigin(tool: SluiceTool): void {
    const { source } = tool;
    if (source.kind !== 'upstream') return;
    const names = this.origins.get(source.upstream);
    if (names?.get(source.originalName) === tool.name) names.delete(source.originalName);
  }

  private enqueue(work: () => Promise<void>): void {
    this.pendingCount++;
    this.pending = this.pending
      .then(work)
      .catch((error: unknown) => {
        this.registrationErrors.push(error instanceof Error ? error : new Error(messageOf(error)));
        this.options.logger.error(
          { event: 'tool.registration_failed', err: error },
          `tool registration failed: ${messageOf(error)}`,
        );
      })
      .finally(() => {
        this.pendingCount--;
      });
  }
}

/** Whether a tool listed again shows clients what it showed before. */
function sameDefinition(before: SluiceTool, after: SluiceTool): boolean {
  return (
    before.definition === after.definition || JSON.stringify(before.definition) === JSON.stringify(after.definition)
  );
}

function sameSource(a: ImportSource, b: ImportSource): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind !== 'upstream' || (b.kind === 'upstream' && a.upstream === b.upstream);
}
