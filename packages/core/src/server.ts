import type { McpServer, Server, Transport as SdkTransport } from '@modelcontextprotocol/server';
import type { DependencyContainer } from 'tsyringe';
import type { InProcessCallOptions, ServerOptions } from './server-options.js';
import { ServerOptionsSchema } from './server-options.js';
import { noApprover } from './approval.js';
import { systemClock } from './clock.js';
import type { Services } from './container.js';
import { Tokens, createServerContainer, servicesOf } from './container.js';
import type { CallRequest, ContextRuntime, Headers, ListContext, Transport } from './context.js';
import { Context, callArguments } from './context.js';
import { CoreErrorCode, SluiceError, messageOf, serverClosed, unknownTool } from './errors.js';
import type { CoreHooks } from './hooks.js';
import { createCoreHooks } from './hooks.js';
import { formatIssues } from './issues.js';
import type { Logger } from './logger.js';
import { createDefaultLogger } from './logger.js';
import { Pipeline } from './pipeline.js';
import type { ToClientError } from './pipeline.js';
import type { Plugin } from './plugin.js';
import { applyPlugins } from './plugin.js';
import type { AuthInfo, CallToolResult, Tool } from './protocol.js';
import { localDraft } from './local-tool.js';
import type { SchemaInput } from './schema.js';
import { MemoryStore } from './store/memory.js';
import type { SkippedTool, SluiceTool, ToolDefinition } from './tool.js';
import type { ImportResult } from './tool-table.js';
import { ToolTable } from './tool-table.js';
import type { HttpListener, ListenOptions } from './serving.js';
import { httpServing } from './serving.js';
import type http from 'node:http';

/** The fields of `@sluice/http`'s listen options that core sets for the consent routes of `per_user` upstreams. */
interface ConsentRouting {
  readonly routes?: Readonly<Record<string, http.RequestListener>>;
  readonly publicRoutes?: readonly string[];
}
import type { ListChange, TransportHooks } from './transport-hooks.js';
import type { StdioHandle, StdioOptions } from './stdio.js';
import type {
  CredentialVault,
  ImportOptions,
  ImportedFeatures,
  ServerUpstreams,
  UpstreamStatus,
} from './upstreaming.js';
import { upstreamImporting, upstreamImportingProvided } from './upstreaming.js';
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
  readonly container: DependencyContainer;
  readonly services: Services;
  /** The plugins that were applied (those not `off`), in order. */
  readonly plugins: readonly Plugin[];
  /** The hooks, for reading; plugins tap them in `apply()` only. */
  readonly hooks: CoreHooks;

  private readonly pipeline: Pipeline;
  private readonly table: ToolTable;
  private closed = false;
  private readonly ownsStore: boolean;
  private readonly drainTimeoutMs: number;
  private readonly instructions: string | undefined;
  private readonly sdkOptions: ServerOptions['sdk'];
  private readonly listChangedNotifiers = new Set<(change: ListChange) => void>();
  private readonly closers = new Set<() => Promise<void>>();
  private readonly runtime: ContextRuntime;
  private readonly sdkExtensions: ((sdk: McpServer) => void)[] = [];
  /** The imported upstreams, kept by `@sluice/upstream`; undefined until the first import. */
  private serverUpstreams: ServerUpstreams | undefined;
  /** Sealed upstream grants (`per_user`), when the server was given a vault. */
  private readonly credentialVault: CredentialVault | undefined;
  private readonly roundStateSecret: string | undefined;
  /** The SDK's server package loading, unless this server was built by adopt(). */
  private readonly sdkLoading: Promise<ServerSdk> | undefined;

  constructor(options: ServerOptions) {
    const parsed = ServerOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new SluiceError(CoreErrorCode.INVALID_OPTIONS, `Invalid server options: ${formatIssues(parsed.error)}`);
    }
    this.name = options.name;
    this.version = options.version;
    this.roundStateSecret = options.roundStateSecret;
    this.instructions = options.instructions;
    this.sdkOptions = options.sdk;
    this.drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
    this.credentialVault = options.credentialVault;
    this.logger = options.logger ?? createDefaultLogger(options.name);
    const clock = options.clock ?? systemClock;
    this.ownsStore = options.store === undefined;
    const store = options.store ?? new MemoryStore(clock);
    this.container = createServerContainer({
      logger: this.logger,
      clock,
      store,
      ...(options.audit === undefined ? {} : { audit: options.audit }),
    });
    this.services = servicesOf(this.container);
    this.hooks = createCoreHooks();
    this.table = new ToolTable({
      hooks: this.hooks,
      logger: this.logger,
      assertOpen: () => this.assertOpen(),
      changed: () => this.notify('tools'),
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
    this.runtime = {
      logger: this.logger,
      dispatch: (name, args, request) => this.dispatch(name, args, request),
      approver: () =>
        this.container.isRegistered(Tokens.Approver, true) ? this.container.resolve(Tokens.Approver) : noApprover,
    };
    registerInternals(this, {
      table: this.table,
      dispatch: (name, args, request) => this.dispatch(name, args, request),
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

  /**
   * Registers a local tool. The tool goes through the `import` hook before it
   * is exposed; `ready()` (and every call, list and listen) waits for that.
   */
  tool<In extends SchemaInput | undefined = undefined>(definition: ToolDefinition<In>): this {
    this.assertOpen();
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
    return this.upstreamSide().import(options);
  }

  /** The server's upstreams, attached by `@sluice/upstream` on first use. */
  private upstreamSide(): ServerUpstreams {
    const importing = upstreamImporting();
    this.serverUpstreams ??= importing.attach({
      name: this.name,
      version: this.version,
      logger: this.logger,
      services: this.services,
      hooks: this.hooks,
      container: this.container,
      table: this.table,
      roundStateSecret: this.roundStateSecret,
      credentialVault: this.credentialVault,
      notify: (change) => this.notify(change),
      isClosed: () => this.closed,
      onClose: (close) => this.onClose(close),
    });
    return this.serverUpstreams;
  }

  /** The resources, templates and prompts of imported upstreams; undefined until the first import. */
  get features(): ImportedFeatures | undefined {
    return this.serverUpstreams?.features;
  }

  /** Every imported upstream, with its health. */
  upstreams(): readonly UpstreamStatus[] {
    return this.serverUpstreams?.list() ?? [];
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
    return this.dispatch(name, args, { meta: options.meta, signal: options.signal, transport: 'in-process' });
  }

  /**
   * Runs a call. `toClient`, given by a transport's request handler, maps
   * how the call failed onto the error its client sees: the rejection is
   * the client's error already, with no `catch` of the transport's own.
   */
  private dispatch(
    name: string,
    args: unknown,
    request: CallRequest,
    toClient?: ToClientError,
  ): Promise<CallToolResult> {
    if (this.closed) return rejectWith(serverClosed('call'), toClient);
    if (!this.table.busy) return this.dispatchNow(name, args, request, toClient);
    // One tool's failed registration is reported by ready(), not to calls of other tools.
    return this.table
      .settled()
      .then(() =>
        this.closed ? rejectWith(serverClosed('call'), toClient) : this.dispatchNow(name, args, request, toClient),
      );
  }

  private dispatchNow(
    name: string,
    args: unknown,
    request: CallRequest,
    toClient: ToClientError | undefined,
  ): Promise<CallToolResult> {
    const entry = this.table.get(name);
    if (entry === undefined) return rejectWith(unknownTool(name, 'call'), toClient);
    let ctx: Context;
    try {
      ctx = new Context(this.runtime, entry.tool, callArguments(args), request);
    } catch (error) {
      // What the constructor threw, unchanged (or as the client sees it).
      return rejectWith(error, toClient);
    }
    return this.pipeline.run(entry, ctx, toClient);
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
        dispatch: (name, args, request, toClient) => this.dispatch(name, args, request, toClient),
        upstreams: () => this.serverUpstreams,
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
    return this.serverUpstreams?.admitListen(uris, caller) ?? Promise.resolve([...uris]);
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
    const { sendChange } = await this.readyToServe();
    const sdk = this.createSdkServer('in-process');
    const detachNotify = this.onListChanged((change) => sendChange(sdk, change));
    const detachClose = this.onClose(() => sdk.close());
    sdk.onclose = () => {
      detachNotify();
      detachClose();
    };
    await sdk.connect(transport);
  }

  /**
   * Serves Streamable HTTP (both protocol versions), on loopback unless told
   * otherwise. Needs `@sluice/http`, imported once anywhere in the program.
   */
  async listen(options: ListenOptions = {}): Promise<HttpListener> {
    this.assertOpen();
    const serving = httpServing();
    await this.readyToServe();
    // A vault is for per_user upstreams: their consent routes come with the upstream import, when it is installed.
    const consent =
      this.credentialVault !== undefined && upstreamImportingProvided()
        ? await this.upstreamSide().consent()
        : undefined;
    if (consent === undefined) return serving.listen(this, options, this.transportHooks);
    // The consent page and callback of per_user upstreams: authorized by their single-use ticket and state.
    // Core's ListenOptions is filled in by @sluice/http; these are the fields of it that core sets.
    const routes = consent.routes();
    const own = options as ListenOptions & ConsentRouting;
    const listener = (await serving.listen(
      this,
      {
        ...own,
        routes: { ...routes, ...own.routes },
        publicRoutes: [...Object.keys(routes), ...(own.publicRoutes ?? [])],
      },
      this.transportHooks,
    )) as HttpListener & { readonly url: URL };
    consent.listening(listener.url);
    return listener;
  }

  /** Serves stdio (both protocol versions). Logs must go to stderr: the default logger does. */
  async serveStdio(options: StdioOptions = {}): Promise<StdioHandle> {
    this.assertOpen();
    await this.readyToServe();
    const { serveOverStdio } = await import('./stdio.js');
    return serveOverStdio(this, options, this.transportHooks);
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

  private readonly transportHooks: TransportHooks = {
    onListChanged: (notify) => this.onListChanged(notify),
    onClose: (close) => this.onClose(close),
  };

  private onListChanged(notify: (change: ListChange) => void): () => void {
    this.listChangedNotifiers.add(notify);
    return () => void this.listChangedNotifiers.delete(notify);
  }

  /** Registers something to close with the server (a transport, an upstream connection). */
  private onClose(close: () => Promise<void>): () => void {
    this.closers.add(close);
    return () => void this.closers.delete(close);
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
    await this.pipeline.drain(this.drainTimeoutMs);
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

  private assertOpen(): void {
    if (this.closed) throw serverClosed('call');
  }
}

export function createServer(options: ServerOptions): SluiceServer {
  return new SluiceServer(options);
}

/** A failure as a rejection: as it is, or as the client sees it. */
function rejectWith(error: unknown, toClient: ToClientError | undefined): Promise<never> {
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on what was thrown, unchanged unless mapped
  return Promise.reject(toClient === undefined ? error : toClient(error));
}
