import type { McpServer, Server, Transport as SdkTransport } from '@modelcontextprotocol/server';
import type { DependencyContainer } from 'tsyringe';
import type { InProcessCallOptions, ServerOptions } from './server-options.js';
import { ServerOptionsSchema } from './server-options.js';
import { noApprover } from './approval.js';
import { systemClock } from './clock.js';
import type { Services } from './container.js';
import type { ServerServices } from './container.js';
import { Tokens, createServerServices } from './container.js';
import type { Headers, ListContext, Transport } from './context.js';
import { CoreErrorCode, SluiceError } from './errors.js';
import type { CoreHooks } from './hooks.js';
import { createCoreHooks } from './hooks.js';
import { formatIssues } from './issues.js';
import type { Logger } from './logger.js';
import { createDefaultLogger } from './logger.js';
import { Pipeline } from './pipeline.js';
import type { Plugin } from './plugin.js';
import { ONCE, applyPlugins } from './plugin.js';
import type { AuthInfo, CallToolResult, Tool } from './protocol.js';
import { localDraft } from './local-tool.js';
import type { SchemaInput } from './schema.js';
import { MemoryStore } from './store/memory.js';
import type { SkippedTool, SluiceTool, ToolDefinition } from './tool.js';
import type { ImportResult } from './tool-table.js';
import { ToolTable } from './tool-table.js';
import type { HttpListener, ListenOptions } from './serving.js';
import { httpServing, stdioServing } from './serving.js';
import { CallDispatcher } from './server-calls.js';
import { ServerLifecycle } from './server-lifecycle.js';
import { connectTransport, listenHttp } from './server-serving.js';
import type { ListChange } from './transport-hooks.js';
import type { StdioHandle, StdioOptions } from './serving.js';
import type { ImportOptions, ImportedFeatures, UpstreamStatus } from './upstreaming.js';
import { ServerImports } from './server-imports.js';
import { registerInternals } from './server-internals.js';
import type { ServerSdk } from './server-sdk-loader.js';
import { loadServerSdk, loadedServerSdk } from './server-sdk-loader.js';

/** Set while adopt() builds its server: that one holds plugins for a server that serves itself, and loads no SDK. */
let buildingForAdopt = false;

/** The Sluice server behind `adopt()`: like any other, but it does not load the SDK's server package until it serves. */
export function adoptingServer(options: ServerOptions): SluiceServer {
  buildingForAdopt = true;
  try {
    return new SluiceServer(options);
  } finally {
    buildingForAdopt = false;
  }
}

/**
 * A Sluice server: tools (local and imported) behind one pipeline of hooks,
 * served over Streamable HTTP, stdio, or any SDK transport.
 */
export class SluiceServer {
  readonly name: string;
  readonly version: string;
  readonly logger: Logger;
  readonly services: Services;
  /** The plugins that were applied (those not `off`), in order. */
  readonly plugins: readonly Plugin[];
  /** The hooks, for reading; plugins tap them in `apply()` only. */
  readonly hooks: CoreHooks;

  private readonly serverServices: ServerServices;
  private readonly pipeline: Pipeline;
  private readonly table: ToolTable;
  private readonly calls: CallDispatcher;
  private readonly lifecycle = new ServerLifecycle();
  private readonly ownsStore: boolean;
  private readonly drainTimeoutMs: number;
  private readonly instructions: string | undefined;
  private readonly sdkOptions: ServerOptions['sdk'];
  private readonly sdkExtensions: ((sdk: McpServer) => void)[] = [];
  private readonly imports: ServerImports;
  /** The SDK's server package loading, unless this server was built by adopt(). */
  private readonly sdkLoading: Promise<ServerSdk> | undefined;

  constructor(options: ServerOptions) {
    const parsed = ServerOptionsSchema.safeParse(options, ONCE);
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
    this.serverServices = createServerServices({
      logger: this.logger,
      clock,
      store,
      ...(options.audit === undefined ? {} : { audit: options.audit }),
    });
    this.services = this.serverServices.services;
    this.hooks = createCoreHooks();
    this.table = new ToolTable({
      hooks: this.hooks,
      logger: this.logger,
      assertOpen: () => this.lifecycle.assertOpen(),
      changed: (change) => this.lifecycle.notify(change),
    });
    // Tools plugins register while they are applied wait for the pipeline; later ones register at once.
    let pluginTools: ToolDefinition[] | undefined = [];
    this.plugins = applyPlugins(options.plugins ?? [], {
      hooks: this.hooks,
      logger: this.logger,
      services: this.services,
      server: { name: this.name, version: this.version },
      tools: this.table.catalog,
      tool: (definition) => (pluginTools ? pluginTools.push(definition) : this.tool(definition)),
    });
    this.pipeline = new Pipeline(this.hooks, this.logger);
    this.table.bind(this.pipeline);
    this.calls = new CallDispatcher({
      table: this.table,
      pipeline: this.pipeline,
      logger: this.logger,
      approver: () => {
        // No container yet: nothing can have registered an approver in it.
        const container = this.serverServices.createdContainer();
        return container?.isRegistered(Tokens.Approver, true) ? container.resolve(Tokens.Approver) : noApprover;
      },
      isClosed: () => this.lifecycle.closed,
    });
    const services = this.services;
    this.imports = new ServerImports({
      name: this.name,
      version: this.version,
      logger: this.logger,
      services: this.services,
      hooks: this.hooks,
      // Read when an upstream attaches, which creates the container.
      get container() {
        return services.container;
      },
      table: this.table,
      roundStateSecret: options.roundStateSecret,
      credentialVault: options.credentialVault,
      notify: (change) => this.lifecycle.notify(change),
      isClosed: () => this.lifecycle.closed,
      onClose: (close) => this.lifecycle.onClose(close),
    });
    registerInternals(this, {
      table: this.table,
      dispatch: (name, args, request) => this.calls.dispatch(name, args, request),
    });
    const provided = pluginTools;
    pluginTools = undefined;
    for (const definition of provided) this.tool(definition);
    if (!buildingForAdopt) {
      this.sdkLoading = loadServerSdk();
      // Reported by ready() and whatever serves; a server that never does is not failed by it.
      this.sdkLoading.catch(() => undefined);
    }
  }

  /** The server's own child container (tsyringe), created on first access: register or resolve services by token. */
  get container(): DependencyContainer {
    return this.services.container;
  }

  /**
   * Registers a local tool. The tool goes through the `import` hook before it
   * is exposed; `ready()` (and every call, list and listen) waits for that.
   */
  tool<In extends SchemaInput | undefined = undefined>(definition: ToolDefinition<In>): this {
    this.lifecycle.assertOpen();
    this.table.register(localDraft(definition));
    return this;
  }

  /** Stops exposing a local tool registered with `tool()`; returns whether it was exposed. */
  removeTool(name: string): boolean {
    if (this.table.get(name)?.tool.source.kind !== 'local') return false;
    this.table.remove([name]);
    return true;
  }

  /**
   * Resolves when every tool registered so far is exposed, and the SDK's
   * server package has loaded; rejects with the first registration failure.
   */
  ready(): Promise<void> {
    const tools = this.table.ready();
    return this.sdkLoading === undefined ? tools : Promise.all([tools, this.sdkLoading]).then(() => undefined);
  }

  /** Ready, with the SDK's server package loaded whoever built the server. */
  private async readyToServe(): Promise<ServerSdk> {
    await this.ready();
    return loadServerSdk();
  }

  /**
   * Imports the tools of an upstream MCP server (in-process, stdio, Streamable
   * HTTP or legacy SSE) through the `import` hook, keeps them in step with its
   * `tools/list`, and proxies their calls. An upstream that cannot be reached
   * is reported in `skipped` and retried in the background. Needs
   * `@sluice/upstream`, imported once anywhere in the program.
   */
  async import(options: ImportOptions): Promise<ImportResult> {
    return this.imports.import(options);
  }

  /** The resources, templates and prompts of imported upstreams; undefined until the first import. */
  get features(): ImportedFeatures | undefined {
    return this.imports.features;
  }

  /** Every imported upstream, with its health. */
  upstreams(): readonly UpstreamStatus[] {
    return this.imports.list();
  }

  /** The tools exposed now. */
  tools(): readonly SluiceTool[] {
    return this.table.tools();
  }

  /** Tools the import hook kept out so far, with reasons. */
  skipped(): readonly SkippedTool[] {
    return this.table.skipped();
  }

  /** What `tools/list` shows to a request. */
  listTools(context: Partial<ListContext> = {}): Tool[] {
    return this.table.list(context);
  }

  /** Calls a tool in-process through the whole pipeline. */
  call(name: string, args: Record<string, unknown> = {}, options: InProcessCallOptions = {}): Promise<CallToolResult> {
    return this.calls.dispatch(name, args, { meta: options.meta, signal: options.signal, transport: 'in-process' });
  }

  /**
   * A fresh SDK server bound to this Sluice server. Every transport uses
   * one: per connection for stdio and in-process, per request for stateless HTTP.
   * The SDK's server package loads with the server: call this after
   * `await server.ready()`; before it has loaded, it throws `INVALID_STATE`.
   */
  createSdkServer(transport: Transport = 'in-process'): Server {
    return loadedServerSdk().buildSdkServer(
      {
        info: { name: this.name, version: this.version },
        options: {
          ...this.sdkOptions,
          capabilities: { tools: { listChanged: true } },
          ...(this.instructions ? { instructions: this.instructions } : {}),
        },
        extensions: this.sdkExtensions,
        logger: this.logger,
        hooks: this.hooks,
        settled: () => this.table.settled(),
        list: (context) => this.listTools(context),
        dispatch: (name, args, request, toClient) => this.calls.dispatch(name, args, request, toClient),
        upstreams: () => this.imports.current,
      },
      transport,
    );
  }

  /**
   * Admits the resource URIs of a 2026-07-28 `subscriptions/listen` filter
   * as `resources/subscribe` requests of this caller, or rejects with the
   * error the client gets; resolves to their canonical spellings. The HTTP
   * listener asks it before it holds the stream.
   * @internal
   */
  admitListen(
    uris: readonly string[],
    caller: { authInfo: AuthInfo | undefined; headers: Headers | undefined; signal: AbortSignal },
  ): Promise<string[]> {
    return this.imports.admitListen(uris, caller);
  }

  /**
   * Registers resources, prompts, completions or logging on every SDK server
   * this server creates (one per connection, or per request on stateless
   * HTTP). Tools belong to `server.tool()`, so that they run through the
   * pipeline; registering a tool here throws.
   */
  extendSdk(register: (sdk: McpServer) => void): this {
    this.lifecycle.assertOpen();
    if (typeof register !== 'function')
      throw new SluiceError(CoreErrorCode.INVALID_STATE, 'extendSdk() takes a function');
    this.sdkExtensions.push(register);
    return this;
  }

  /** Connects one SDK transport (in-process, or any the SDK offers). Speaks 2025-11-25. */
  async connect(transport: SdkTransport): Promise<void> {
    this.lifecycle.assertOpen();
    const sdkPackage = await this.readyToServe();
    await connectTransport(this, transport, sdkPackage, this.lifecycle.transportHooks);
  }

  /**
   * Serves Streamable HTTP (both protocol versions), on loopback unless told
   * otherwise. Needs `@sluice/http`, imported once anywhere in the program.
   */
  async listen(options: ListenOptions = {}): Promise<HttpListener> {
    this.lifecycle.assertOpen();
    const serving = httpServing();
    await this.readyToServe();
    const consent = await this.imports.consent();
    return listenHttp(serving, this, options, this.lifecycle.transportHooks, consent);
  }

  /**
   * Serves stdio (both protocol versions). Logs must go to stderr: the default logger does.
   * Needs `@sluice/stdio`, imported once anywhere in the program.
   */
  async serveStdio(options: StdioOptions = {}): Promise<StdioHandle> {
    this.lifecycle.assertOpen();
    const serving = stdioServing();
    await this.readyToServe();
    return serving.serve(this, options, this.lifecycle.transportHooks);
  }

  /**
   * Tells every connected client what changed: a list (`'tools'`,
   * `'prompts'`, `'resources'`) or one resource (`{ resourceUpdated: uri }`).
   * Tool changes are sent on their own; call this for what `extendSdk()`
   * registers.
   */
  notify(change: ListChange): void {
    this.lifecycle.notify(change);
  }

  /** Whether `close()` has begun. */
  get isClosed(): boolean {
    return this.lifecycle.closed;
  }

  /**
   * Stops taking calls, waits for running ones (up to `drainTimeoutMs`), then
   * closes every transport and, if the server created it, the store.
   */
  close(): Promise<void> {
    return this.lifecycle.close({
      drain: () => this.pipeline.drain(this.drainTimeoutMs),
      plugins: this.plugins,
      logger: this.logger,
      closeStore: this.ownsStore ? () => this.services.store.close() : undefined,
    });
  }
}

export function createServer(options: ServerOptions): SluiceServer {
  return new SluiceServer(options);
}
