import { CoreErrorCode, SluiceError, unknownTool } from './errors.js';
import type { CallContext, Executor } from './context.js';
import type { Plugin } from './plugin.js';
import type { CallToolResult, Tool } from './protocol.js';
import type { NativeExtra, NativeHandler, NativeRequest } from './adopt-native.js';
import { authInfoOf, transportOf } from './adopt-native.js';
import type { ServerOptions } from './server-options.js';
import { headersOf } from './request-headers.js';
import type { SluiceServer } from './server.js';
import { adoptingServer } from './server.js';
import { requestsTapped } from './pipeline.js';
import { internalsOf } from './server-internals.js';
import type { SluiceTool } from './tool.js';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import { MemoryStore } from './store/memory.js';
import { toProtocolError } from './protocol-errors.js';

/**
 * The parts of an SDK `McpServer` that `adopt()` relies on. Both the v1
 * package (`@modelcontextprotocol/sdk`) and v2 (`@modelcontextprotocol/server`)
 * keep request handlers in a map on the low-level server and registered
 * tools in a record; neither offers a public interception point for calls.
 */
export interface AdoptableServer {
  readonly server: object;
}

interface RegisteredToolRecord {
  title?: string;
  description?: string;
  annotations?: Tool['annotations'];
  _meta?: Record<string, unknown>;
  enabled?: boolean;
}

interface Carried {
  readonly request: NativeRequest;
  readonly extra: NativeExtra;
}

const CARRIED = Symbol('dev.sluice/adopt.native');

export type AdoptOptions = Partial<Omit<ServerOptions, 'plugins'>>;

/**
 * Puts the Sluice pipeline in front of the tool calls of an existing SDK
 * `McpServer` (v1 or v2), in place: its clients see nothing new but the
 * guarded behaviour. The `import` hook runs once per tool, on first sight
 * (skips apply; renames do not, since the server's names are its own);
 * `listTools`, `preCall`, `execute`, `postCall` and `settled` run as on any
 * Sluice server. Returns the Sluice server that holds the plugins, for its
 * services and `close()`.
 */
export function adopt(existing: AdoptableServer, plugins: readonly Plugin[], options: AdoptOptions = {}): SluiceServer {
  // JavaScript callers may pass anything, null included.
  const low = (existing as AdoptableServer | null | undefined)?.server as { _requestHandlers?: unknown } | undefined;
  const handlers = low?._requestHandlers;
  if (!(handlers instanceof Map)) {
    throw new SluiceError(
      CoreErrorCode.INVALID_STATE,
      'adopt() takes an McpServer from @modelcontextprotocol/sdk (v1) or @modelcontextprotocol/server (v2)',
    );
  }
  const registry = (): Record<string, RegisteredToolRecord> =>
    (existing as unknown as { _registeredTools?: Record<string, RegisteredToolRecord> })._registeredTools ?? {};
  // Names come from clients: only the server's own entries count, never Object.prototype's.
  const recordOf = (name: string): RegisteredToolRecord | undefined => {
    const tools = registry();
    if (!Object.hasOwn(tools, name)) return undefined;
    // Another library filled this registry: check each entry rather than trust its type.
    const record: unknown = tools[name];
    return typeof record === 'object' && record !== null ? record : undefined;
  };
  const sluice = adoptingServer({
    name: options.name ?? 'adopted',
    version: options.version ?? '0.0.0',
    ...options,
    store: options.store ?? processStore(options.clock ?? systemClock),
    plugins,
  });
  const internals = internalsOf(sluice);
  const { table } = internals;
  const admitted = new Map<string, Promise<boolean>>();

  const admit = (name: string): Promise<boolean> => {
    let known = admitted.get(name);
    if (known === undefined) {
      known = (async () => {
        const record = recordOf(name);
        if (record === undefined) return false;
        const tool: SluiceTool = {
          name,
          definition: definitionOf(existing, name, record),
          policy: {},
          source: { kind: 'adopted' },
        };
        const result = await table.admit({ kind: 'adopted' }, [{ tool, base: adoptedExecutor(name) }]);
        return result.imported.includes(name);
      })();
      admitted.set(name, known);
    }
    return known;
  };

  const wrapCall =
    (original: NativeHandler): NativeHandler =>
    async (request, extra) => {
      const name = request.params?.name;
      if (typeof name !== 'string' || recordOf(name) === undefined) return original(request, extra);
      if (!(await admit(name))) {
        throw toProtocolError(unknownTool(name));
      }
      try {
        return await internals.dispatch(name, request.params?.arguments, {
          meta: request.params?._meta,
          signal: extra.mcpReq?.signal ?? extra.signal,
          requestId: extra.mcpReq?.id ?? extra.requestId,
          authInfo: authInfoOf(extra),
          headers: headersOf(extra),
          transport: transportOf(extra),
          state: [[CARRIED, { request, extra, original } satisfies Carried & { original: NativeHandler }]],
        });
      } catch (error) {
        throw toProtocolError(error);
      }
    };

  const wrapList =
    (original: NativeHandler): NativeHandler =>
    async (request, extra) => {
      const listed = (await original(request, extra)) as { tools: Tool[] };
      const visible: Tool[] = [];
      for (const tool of listed.tools) if (await admit(tool.name)) visible.push(tool);
      const tools = table.filter(visible, {
        headers: headersOf(extra) ?? {},
        authInfo: authInfoOf(extra),
      });
      return { ...listed, tools };
    };

  installInterceptor(handlers as Map<string, NativeHandler>, {
    ...featureGuards(sluice),
    'tools/call': wrapCall,
    'tools/list': wrapList,
  });
  return sluice;
}

/** The in-memory store every adopt() without a `store` of its own shares, one per clock. */
const processStores = new WeakMap<Clock, MemoryStore>();

/**
 * The store of an adopted server that was given none. Shared by every such
 * server in the process, so a guard holds across servers built per request
 * (the SDK's stateless HTTP pattern); no adopted server owns or closes it.
 */
function processStore(clock: Clock): MemoryStore {
  let store = processStores.get(clock);
  if (store === undefined) {
    store = new MemoryStore(clock);
    processStores.set(clock, store);
  }
  return store;
}

/** Every method the feature guards may wrap (see adopt-features.ts). */
const FEATURE_METHODS = [
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'resources/read',
  'prompts/get',
] as const;

/**
 * The wrappers of adopt-features.ts when a plugin taps `listFeatures` (or
 * `featureAccess`), or `request`, `response` or `guard` for a kind other
 * than tool calls, none otherwise. They load with the first request of a
 * feature method, not with adopt(): a server guarding its tools only never
 * loads them. A method the guards leave alone passes through.
 */
function featureGuards(sluice: SluiceServer): Record<string, (original: NativeHandler) => NativeHandler> {
  if (!sluice.hooks.listFeatures.isUsed() && !requestsTapped(sluice.hooks)) return {};
  let loading: Promise<Record<string, (original: NativeHandler) => NativeHandler>> | undefined;
  const load = () =>
    (loading ??= Promise.all([import('./adopt-features.js'), import('./features/feature-guards.js')]).then(
      ([{ featureWrappers }, { guardsOf }]) => featureWrappers(guardsOf(sluice.hooks), sluice.logger),
    ));
  const wrappers: Record<string, (original: NativeHandler) => NativeHandler> = {};
  for (const method of FEATURE_METHODS)
    wrappers[method] = (original) => {
      let wrapped: NativeHandler | undefined;
      return async (request, extra) => {
        wrapped ??= (await load())[method]?.(original) ?? original;
        return wrapped(request, extra);
      };
    };
  return wrappers;
}

/** Runs the adopted server's own handler with the arguments the pipeline settled on. */
function adoptedExecutor(name: string): Executor {
  return async (ctx: CallContext): Promise<CallToolResult> => {
    const carried = findCarried(ctx);
    if (carried === undefined) {
      throw new SluiceError(
        CoreErrorCode.INVALID_STATE,
        `Tool "${name}" of an adopted server can only be called through that server`,
        {
          hook: 'call',
        },
      );
    }
    const request: NativeRequest = {
      ...carried.request,
      method: 'tools/call',
      params: { ...carried.request.params, name, arguments: ctx.arguments },
    };
    return (await carried.original(request, carried.extra)) as CallToolResult;
  };
}

/** A nested `ctx.call()` reuses the native request of the call that started it. */
function findCarried(ctx: CallContext | undefined): (Carried & { original: NativeHandler }) | undefined {
  for (let c = ctx; c !== undefined; c = c.parent) {
    const carried = c.state.get(CARRIED) as (Carried & { original: NativeHandler }) | undefined;
    if (carried) return carried;
  }
  return undefined;
}

function definitionOf(existing: AdoptableServer, name: string, record: RegisteredToolRecord): Tool {
  const jsonOf = (existing as { toolInputSchemaJson?: (n: string) => Record<string, unknown> | undefined })
    .toolInputSchemaJson;
  const inputSchema = (typeof jsonOf === 'function' ? jsonOf.call(existing, name) : undefined) ?? { type: 'object' };
  return {
    name,
    ...(record.title === undefined ? {} : { title: record.title }),
    ...(record.description === undefined ? {} : { description: record.description }),
    inputSchema: inputSchema as Tool['inputSchema'],
    ...(record.annotations === undefined ? {} : { annotations: record.annotations }),
    ...(record._meta === undefined ? {} : { _meta: record._meta }),
  };
}

/**
 * Wraps the given methods' handlers now and whenever the server sets them
 * later (the SDK installs tool handlers on the first `registerTool`).
 */
function installInterceptor(
  handlers: Map<string, NativeHandler>,
  wrappers: Record<string, (h: NativeHandler) => NativeHandler>,
): void {
  const marker = Symbol.for('dev.sluice/adopted');
  if ((handlers as unknown as Record<symbol, boolean>)[marker]) {
    throw new SluiceError(
      CoreErrorCode.INVALID_STATE,
      'This server is already adopted: adopt it once, with all the plugins it needs',
    );
  }
  Object.defineProperty(handlers, marker, { value: true });
  const set = handlers.set.bind(handlers);
  for (const [method, handler] of handlers) {
    const wrap = wrappers[method];
    if (wrap) set(method, wrap(handler));
  }
  handlers.set = (method: string, handler: NativeHandler) => {
    const wrap = wrappers[method];
    return set(method, wrap ? wrap(handler) : handler);
  };
}
