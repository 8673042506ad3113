import { identityOf } from './auth/identity.js';
import { McpServer, Server } from '@modelcontextprotocol/server';
import type { ServerOptions as SdkServerOptions, Transport as SdkTransport } from '@modelcontextprotocol/server';
import type { DependencyContainer } from 'tsyringe';
import { z } from 'zod';
import type { Approver } from './approval.js';
import { noApprover } from './approval.js';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { Services } from './container.js';
import { Tokens, createServerContainer, servicesOf } from './container.js';
import type { CallRequest, ContextRuntime, Executor, ListContext, Transport } from './context.js';
import { Context } from './context.js';
import { CoreErrorCode, RpcCode, SluiceError, invalidParams, messageOf } from './errors.js';
import type { CoreHooks } from './hooks.js';
import { createCoreHooks } from './hooks.js';
import { formatIssues } from './issues.js';
import type { Logger } from './logger.js';
import { createDefaultLogger } from './logger.js';
import type { RegisteredTool } from './pipeline.js';
import { Pipeline } from './pipeline.js';
import type { Plugin } from './plugin.js';
import { applyPlugins } from './plugin.js';
import type { CallToolResult, Tool } from './protocol.js';
import { localDraft } from './local-tool.js';
import { rethrowForClient } from './protocol-errors.js';
import { headersOf } from './request-headers.js';
import type { CompiledSchema, SchemaInput } from './schema.js';
import { MemoryStore } from './store/memory.js';
import type { Store } from './store/types.js';
import type { ImportBatch, ImportSource, SkippedTool, SluiceTool, ToolDefinition } from './tool.js';
import { createImportBatch } from './tool.js';
import type { HttpListener, ListenOptions } from './http.js';
import type { ListChange } from './transport-hooks.js';
import { sendChange } from './transport-hooks.js';
import type { StdioHandle, StdioOptions } from './stdio.js';
import type { UpstreamStatus } from './upstream/health.js';
import type { ImportOptions } from './upstream/options.js';
import { FeatureCatalog } from './features/catalog.js';
import { guardsOf, serveFeatures } from './features/sdk-handlers.js';
import { presentRound } from './upstream/modern-call.js';
import { RoundStateSeal } from './upstream/round-state.js';
import type { UpstreamRegistry } from './upstream/registry.js';

export interface ServerOptions {
  name: string;
  version: string;
  /** Applied in order at construction; a bad plugin or ordering reference throws here. */
  plugins?: readonly Plugin[];
  /** Default: pino JSON lines on stderr, level from `SLUICE_LOG_LEVEL`. */
  logger?: Logger;
  /** Default: the in-memory store. */
  store?: Store;
  /** Default: the system clock. */
  clock?: Clock;
  /** Shown to clients at initialization. */
  instructions?: string;
  /** How long `close()` waits for running calls before closing anyway. Default 10 s. */
  drainTimeoutMs?: number;
  /**
   * Options passed to every SDK server instance: request-state verification
   * and the input-required knobs of 2026-07-28, cache hints, the JSON Schema
   * validator for elicitation answers.
   */
  sdk?: Pick<SdkServerOptions, 'requestState' | 'inputRequired' | 'cacheHints' | 'jsonSchemaValidator'>;
}

const ServerOptionsSchema = z.object({
  name: z.string().min(1),
  version: z.string().min(1),
  plugins: z.array(z.unknown()).optional(),
  logger: z.unknown().optional(),
  store: z.unknown().optional(),
  clock: z.unknown().optional(),
  instructions: z.string().optional(),
  drainTimeoutMs: z.number().int().nonnegative().optional(),
  sdk: z.record(z.string(), z.unknown()).optional(),
});

/** What `server.call()` accepts. */
export interface InProcessCallOptions {
  /** `_meta` for the call, as a client would send it. */
  meta?: Record<string, unknown>;
  signal?: AbortSignal;
}

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

/**
 * A Sluice server: tools (local and imported) behind one pipeline of hooks,
 * served over Streamable HTTP, stdio, or any SDK transport.
 */
export class SluiceServer {
  readonly name: string;
  readonly version: string;
  readonly logger: Logger;
  readonly container: DependencyContainer;
  readonly services: Services;
  /** The plugins that were applied (those not `off`), in order. */
  readonly plugins: readonly Plugin[];
  /** The hooks, for reading; plugins tap them in `apply()` only. */
  readonly hooks: CoreHooks;

  private readonly pipeline: Pipeline;
  private readonly registered = new Map<string, RegisteredTool>();
  private readonly skippedTools: SkippedTool[] = [];
  private listCache: Tool[] | undefined;
  private pending: Promise<void> = Promise.resolve();
  private pendingCount = 0;
  private readonly pendingNames = new Set<string>();
  private readonly registrationErrors: unknown[] = [];
  private closed = false;
  private readonly ownsStore: boolean;
  private readonly drainTimeoutMs: number;
  private readonly instructions: string | undefined;
  private readonly sdkOptions: ServerOptions['sdk'];
  private readonly listChangedNotifiers = new Set<(change: ListChange) => void>();
  private readonly closers = new Set<() => Promise<void>>();
  private readonly runtime: ContextRuntime;
  private readonly sdkExtensions: ((sdk: McpServer) => void)[] = [];
  private upstreamRegistry: UpstreamRegistry | undefined;
  private featureCatalog: FeatureCatalog | undefined;
  /** Seals the state of upstream round trips; see `upstream/round-state.ts`. */
  readonly roundSeal = new RoundStateSeal();

  constructor(options: ServerOptions) {
    const parsed = ServerOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new SluiceError(CoreErrorCode.INVALID_OPTIONS, `Invalid server options: ${formatIssues(parsed.error)}`);
    }
    this.name = options.name;
    this.version = options.version;
    this.instructions = options.instructions;
    this.sdkOptions = options.sdk;
    this.drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
    this.logger = options.logger ?? createDefaultLogger(options.name);
    const clock = options.clock ?? systemClock;
    this.ownsStore = options.store === undefined;
    const store = options.store ?? new MemoryStore(clock);
    this.container = createServerContainer({ logger: this.logger, clock, store });
    this.services = servicesOf(this.container);
    this.hooks = createCoreHooks();
    // Tools plugins register while they are applied wait for the pipeline; later ones register at once.
    let pluginTools: ToolDefinition[] | undefined = [];
    this.plugins = applyPlugins(options.plugins ?? [], {
      hooks: this.hooks,
      logger: this.logger,
      services: this.services,
      server: { name: this.name, version: this.version },
      container: this.container,
      tools: {
        get: (name) => this.registered.get(name)?.tool,
        inputOf: (name) => this.registered.get(name)?.input,
        names: () => [...this.registered.keys()],
        list: (request) => this.listTools(request),
        notifyChanged: () => this.toolsChanged(),
      },
      tool: (definition) => (pluginTools ? pluginTools.push(definition) : this.tool(definition)),
    });
    this.pipeline = new Pipeline(this.hooks, this.logger);
    this.runtime = {
      logger: this.logger,
      dispatch: (name, args, request) => this.dispatch(name, args, request),
      approver: () =>
        this.container.isRegistered(Tokens.Approver, true) ? this.container.resolve(Tokens.Approver) : noApprover,
    };
    const provided = pluginTools;
    pluginTools = undefined;
    for (const definition of provided) this.tool(definition);
  }

  /**
   * Registers a local tool. The tool goes through the `import` hook before it
   * is exposed; `ready()` (and every call, list and listen) waits for that.
   */
  tool<In extends SchemaInput | undefined = undefined>(definition: ToolDefinition<In>): this {
    this.assertOpen();
    const draft = localDraft(definition as ToolDefinition);
    const name = draft.tool.name;
    if (this.registered.has(name) || this.pendingNames.has(name)) {
      throw new SluiceError(CoreErrorCode.DUPLICATE_TOOL, `A tool named "${name}" is already registered`);
    }
    this.pendingNames.add(name);
    this.enqueue(async () => {
      const result = await this.admit({ kind: 'local' }, [draft]).finally(() => this.pendingNames.delete(name));
      for (const skipped of result.skipped) {
        this.logger.warn(
          { event: 'tool.skipped', tool: skipped.name, reason: skipped.reason, by: skipped.by },
          'local tool was not exposed',
        );
      }
    });
    return this;
  }

  /** Resolves when every tool registered so far is exposed; rejects with the first registration failure. */
  async ready(): Promise<void> {
    while (this.pendingCount > 0) await this.pending;
    const failure = this.registrationErrors.shift();
    if (failure !== undefined) throw failure;
  }

  /**
   * Puts drafts through the `import` hook and exposes what it keeps. Used for
   * local tools and by upstream import; replaces tools of the same name from
   * the same source.
   */
  async admit(source: ImportSource, drafts: readonly ToolDraft[]): Promise<ImportResult> {
    this.assertOpen();
    const bases = new Map<SluiceTool, ToolDraft>(drafts.map((d) => [d.tool, d]));
    const nativeNames = new Map<SluiceTool, string>(drafts.map((d) => [d.tool, d.tool.name]));
    let batch: ImportBatch = createImportBatch(
      source,
      drafts.map((d) => d.tool),
    );
    if (this.pipeline.importUsed) batch = await this.hooks.import.promise(batch);
    const imported: string[] = [];
    const skipped: SkippedTool[] = [...batch.skipped];
    for (const tool of batch.tools) {
      const draft = bases.get(tool);
      if (!draft) {
        throw new SluiceError(
          CoreErrorCode.INVALID_STATE,
          `An import tap replaced the tool object "${tool.name}": mutate tools in place or skip them`,
          {
            hook: 'import',
          },
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
      const executor = this.pipeline.compose(draft.base, tool);
      this.registered.set(tool.name, { tool, executor, input: draft.input });
      imported.push(tool.name);
    }
    this.skippedTools.push(...skipped);
    if (imported.length > 0) this.toolsChanged();
    return { imported, skipped };
  }

  /** Stops exposing tools (an upstream dropped them). */
  removeTools(names: Iterable<string>): void {
    let changed = false;
    for (const name of names) changed = this.registered.delete(name) || changed;
    if (changed) this.toolsChanged();
  }

  /**
   * Imports the tools of an upstream MCP server (in-process, stdio, Streamable
   * HTTP or legacy SSE) through the `import` hook, keeps them in step with its
   * `tools/list`, and proxies their calls. An upstream that cannot be reached
   * is reported in `skipped` and retried in the background. See `upstream/`.
   */
  async import(options: ImportOptions): Promise<ImportResult> {
    // Loaded on first use: a server without upstreams never loads the SDK client.
    const { UpstreamRegistry } = await import('./upstream/registry.js');
    this.featureCatalog ??= new FeatureCatalog(
      (change) => this.notify(change),
      this.logger,
      this.hooks.importFeatures.isUsed() ? (batch) => this.hooks.importFeatures.promise(batch) : undefined,
    );
    this.upstreamRegistry ??= new UpstreamRegistry(this);
    return this.upstreamRegistry.import(options);
  }

  /** The resources, templates and prompts of imported upstreams; undefined until the first import. */
  get features(): FeatureCatalog | undefined {
    return this.featureCatalog;
  }

  /** Every imported upstream, with its health. */
  upstreams(): readonly UpstreamStatus[] {
    return this.upstreamRegistry?.list() ?? [];
  }

  /** The tools exposed now. */
  tools(): readonly SluiceTool[] {
    return [...this.registered.values()].map((r) => r.tool);
  }

  /** Tools the import hook kept out so far, with reasons. */
  skipped(): readonly SkippedTool[] {
    return [...this.skippedTools];
  }

  /** What `tools/list` shows to a request. */
  listTools(context: Partial<ListContext> = {}): Tool[] {
    this.listCache ??= [...this.registered.values()].map((r) => r.tool.definition);
    return this.pipeline.listToolsUsed ? this.filterList([...this.listCache], context) : this.listCache;
  }

  /** Runs the `listTools` hook over a list of definitions. */
  filterList(tools: Tool[], context: Partial<ListContext> = {}): Tool[] {
    if (!this.pipeline.listToolsUsed) return tools;
    const ctx: ListContext = {
      headers: context.headers ?? {},
      authInfo: context.authInfo,
      auth: identityOf(context.authInfo),
      transport: context.transport ?? 'in-process',
      logger: context.logger ?? this.logger,
      toolOf: (name) => this.registered.get(name)?.tool,
    };
    return this.hooks.listTools.call(tools, ctx);
  }

  /** Calls a tool in-process through the whole pipeline. */
  call(name: string, args: Record<string, unknown> = {}, options: InProcessCallOptions = {}): Promise<CallToolResult> {
    return this.dispatch(name, args, { meta: options.meta, signal: options.signal, transport: 'in-process' });
  }

  /** Runs a call through the pipeline: the one entry point of every transport. */
  dispatch(name: string, args: unknown, request: CallRequest): Promise<CallToolResult> {
    if (this.closed) return Promise.reject(closedError());
    if (this.pendingCount === 0) return this.dispatchNow(name, args, request);
    // One tool's failed registration is reported by ready(), not to calls of other tools.
    return this.registrationsSettled().then(() =>
      this.closed ? Promise.reject(closedError()) : this.dispatchNow(name, args, request),
    );
  }

  /** Waits for pending registrations without reporting their failures. */
  private async registrationsSettled(): Promise<void> {
    while (this.pendingCount > 0) await this.pending;
  }

  private dispatchNow(name: string, args: unknown, request: CallRequest): Promise<CallToolResult> {
    const entry = this.registered.get(name);
    if (entry === undefined) {
      return Promise.reject(
        new SluiceError(CoreErrorCode.UNKNOWN_TOOL, `Unknown tool: "${name}"`, {
          rpcCode: RpcCode.INVALID_PARAMS,
          hook: 'call',
        }),
      );
    }
    let ctx: Context;
    try {
      ctx = new Context(this.runtime, entry.tool, argumentsOf(args), request);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.pipeline.run(entry, ctx);
  }

  /**
   * A fresh SDK server bound to this Sluice server. Every transport uses
   * one: per connection for stdio and in-process, per request for stateless HTTP.
   */
  createSdkServer(transport: Transport = 'in-process'): Server {
    const info = { name: this.name, version: this.version };
    const options: SdkServerOptions = {
      ...this.sdkOptions,
      capabilities: { tools: { listChanged: true } },
      ...(this.instructions ? { instructions: this.instructions } : {}),
    };
    let sdk: Server;
    if (this.sdkExtensions.length === 0) {
      sdk = new Server(info, options);
    } else {
      const mcp = new McpServer(info, options);
      for (const extend of this.sdkExtensions) extend(mcp);
      sdk = mcp.server;
    }
    sdk.setRequestHandler('tools/list', async (_request, ctx) => {
      await this.registrationsSettled();
      return { tools: this.listTools({ headers: headersOf(ctx) ?? {}, authInfo: ctx.http?.authInfo, transport }) };
    });
    sdk.setRequestHandler('tools/call', (request, ctx) =>
      this.dispatch(request.params.name, request.params.arguments, {
        meta: request.params._meta,
        signal: ctx.mcpReq.signal,
        requestId: ctx.mcpReq.id,
        authInfo: ctx.http?.authInfo,
        headers: headersOf(ctx),
        transport,
        mcp: this.upstreamRegistry ? presentRound(ctx, this.roundSeal) : ctx,
      }).catch(rethrowForClient),
    );
    if (this.featureCatalog)
      serveFeatures(sdk, {
        catalog: this.featureCatalog,
        logger: this.logger,
        transport,
        guards: guardsOf(this.hooks),
      });
    return sdk;
  }

  /**
   * Registers resources, prompts, completions or logging on every SDK server
   * this server creates (one per connection, or per request on stateless
   * HTTP). Tools belong to `server.tool()`, so that they run through the
   * pipeline; registering a tool here throws.
   */
  extendSdk(register: (sdk: McpServer) => void): this {
    this.assertOpen();
    if (typeof register !== 'function')
      throw new SluiceError(CoreErrorCode.INVALID_STATE, 'extendSdk() takes a function');
    this.sdkExtensions.push(register);
    return this;
  }

  /** Connects one SDK transport (in-process, or any the SDK offers). Speaks 2025-11-25. */
  async connect(transport: SdkTransport): Promise<void> {
    this.assertOpen();
    await this.ready();
    const sdk = this.createSdkServer('in-process');
    const notify = (change: ListChange) => sendChange(sdk, change);
    this.listChangedNotifiers.add(notify);
    const close = () => sdk.close();
    this.closers.add(close);
    sdk.onclose = () => {
      this.listChangedNotifiers.delete(notify);
      this.closers.delete(close);
    };
    await sdk.connect(transport);
  }

  /** Serves Streamable HTTP (both protocol versions), on loopback unless told otherwise. */
  async listen(options: ListenOptions = {}): Promise<HttpListener> {
    this.assertOpen();
    await this.ready();
    // Loaded on first use, like stdio below: adopt() and in-process servers never load the node HTTP adapter.
    const { listenHttp } = await import('./http.js');
    const listener = await listenHttp(this, options, this.hooksForTransport());
    return listener;
  }

  /** Serves stdio (both protocol versions). Logs must go to stderr: the default logger does. */
  async serveStdio(options: StdioOptions = {}): Promise<StdioHandle> {
    this.assertOpen();
    await this.ready();
    const { serveOverStdio } = await import('./stdio.js');
    return serveOverStdio(this, options, this.hooksForTransport());
  }

  /** Tells connected clients that the tool list changed. */
  private toolsChanged(): void {
    this.listCache = undefined;
    this.notify('tools');
  }

  /**
   * Tells every connected client what changed: a list (`'tools'`,
   * `'prompts'`, `'resources'`) or one resource (`{ resourceUpdated: uri }`).
   * Tool changes are sent on their own; call this for what `extendSdk()`
   * registers.
   */
  notify(change: ListChange): void {
    for (const send of this.listChangedNotifiers) send(change);
  }

  private hooksForTransport() {
    return {
      onListChanged: (notify: (change: ListChange) => void) => {
        this.listChangedNotifiers.add(notify);
        return () => this.listChangedNotifiers.delete(notify);
      },
      onClose: (close: () => Promise<void>) => {
        this.closers.add(close);
        return () => this.closers.delete(close);
      },
    };
  }

  /** Whether `close()` has begun. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Stops taking calls, waits for running ones (up to `drainTimeoutMs`), then
   * closes every transport and, if the server created it, the store.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pipeline = this.pipeline;
    if (pipeline.inflight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.logger.warn(
            { event: 'server.drain_timeout', inflight: pipeline.inflight },
            'closing with calls still running',
          );
          resolve();
        }, this.drainTimeoutMs);
        timer.unref();
        pipeline.onDrained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const closers = [...this.closers];
    this.closers.clear();
    await Promise.allSettled(closers.map((close) => close()));
    for (const plugin of [...this.plugins].reverse()) {
      try {
        await plugin.close?.();
      } catch (error) {
        this.logger.error(
          { event: 'plugin.failed', plugin: plugin.name, hook: 'close', err: error },
          `plugin close failed: ${messageOf(error)}`,
        );
      }
    }
    if (this.ownsStore) await this.services.store.close();
  }

  /** Registers something to close with the server (an upstream connection). */
  onClose(close: () => Promise<void>): () => void {
    this.closers.add(close);
    return () => this.closers.delete(close);
  }

  private enqueue(work: () => Promise<void>): void {
    this.pendingCount++;
    this.pending = this.pending
      .then(work)
      .catch((error: unknown) => {
        this.registrationErrors.push(error);
        this.logger.error(
          { event: 'tool.registration_failed', err: error },
          `tool registration failed: ${messageOf(error)}`,
        );
      })
      .finally(() => {
        this.pendingCount--;
      });
  }

  private assertOpen(): void {
    if (this.closed) throw closedError();
  }

  /** The approver `ctx.approve()` uses. */
  approver(): Approver {
    return this.runtime.approver();
  }
}

export function createServer(options: ServerOptions): SluiceServer {
  return new SluiceServer(options);
}

function closedError(): SluiceError {
  return new SluiceError(CoreErrorCode.SERVER_CLOSED, 'The server is closed', { hook: 'call' });
}

function sameSource(a: ImportSource, b: ImportSource): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind !== 'upstream' || (b.kind === 'upstream' && a.upstream === b.upstream);
}

function argumentsOf(args: unknown): Record<string, unknown> {
  if (args === undefined || args === null) return {};
  if (typeof args !== 'object' || Array.isArray(args)) throw invalidParams('Tool arguments must be an object');
  return args as Record<string, unknown>;
}
