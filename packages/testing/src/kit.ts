import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { MetaKey, SluiceServer, readRefusal } from '@sluice/core';
import type {
  AuthInfo,
  CallToolResult,
  ImportResult,
  ImportSource,
  Plugin,
  RefusalMeta,
  ServerOptions,
  Store,
  Tool,
  ToolDefinition,
  ToolDraft,
} from '@sluice/core';
import { internalsOf } from '@sluice/core/internal';
import type { CapturedLogger } from './capture-logger.js';
import { captureLogger } from './capture-logger.js';
import { FakeClock } from './fake-clock.js';

/**
 * A server with the doors tests need into its tool table: admit drafts as an
 * upstream or an adopted server would, and drop tools, without a real upstream.
 */
export class TestServer extends SluiceServer {
  /** Puts drafts through the `import` hook and exposes what it keeps, as an upstream import does. */
  admit(source: ImportSource, drafts: readonly ToolDraft[]): Promise<ImportResult> {
    return internalsOf(this).table.admit(source, drafts);
  }

  /** Stops exposing tools of any source, as an upstream that dropped them does. */
  removeTools(names: Iterable<string>): void {
    internalsOf(this).table.remove(names);
  }
}

export interface TestKitOptions {
  plugins?: readonly Plugin[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools?: readonly ToolDefinition<any>[];
  store?: Store;
  /** A fake clock for the server's services (default: the system clock). */
  fakeClock?: boolean;
  /** Further server options (name, instructions...). */
  server?: Partial<Omit<ServerOptions, 'plugins' | 'logger' | 'store' | 'clock'>>;
}

/** What a call carries besides its arguments, as a transport would deliver it. */
export interface KitCallOptions {
  /** The request's `_meta`. */
  readonly meta?: Record<string, unknown>;
  /** The caller's verified identity, as an HTTP transport with auth would pass it. */
  readonly authInfo?: AuthInfo;
  /** Request headers, as a Streamable HTTP request would carry them. */
  readonly headers?: Record<string, string>;
}

export interface TestKit {
  readonly server: TestServer;
  /** A real SDK client connected in-process. */
  readonly client: Client;
  /** Every log record the server and its plugins wrote. */
  readonly logs: CapturedLogger;
  /** The fake clock, when `fakeClock: true`. */
  readonly clock: FakeClock | undefined;
  /**
   * Calls a tool through the client, as a model would; `options` adds the
   * `_meta`, `authInfo` and headers a real transport would deliver, so that
   * per-caller behaviour is testable. A plain record is read as `_meta`.
   */
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: KitCallOptions | Record<string, unknown>,
  ): Promise<CallToolResult>;
  listTools(): Promise<Tool[]>;
  close(): Promise<void>;
}

/**
 * Starts a Sluice server with the given plugins and tools and connects a real
 * SDK client to it in-process: the harness for plugin tests.
 */
export async function createTestKit(options: TestKitOptions = {}): Promise<TestKit> {
  const logs = captureLogger();
  const clock = options.fakeClock ? new FakeClock() : undefined;
  const server = new TestServer({
    name: 'test-server',
    version: '0.0.0',
    ...options.server,
    plugins: options.plugins ?? [],
    logger: logs.logger,
    ...(options.store ? { store: options.store } : {}),
    ...(clock ? { clock } : {}),
  });
  for (const tool of options.tools ?? []) server.tool(tool as ToolDefinition);
  await server.ready();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const delivery = deliverCallerDetails(serverSide);
  const client = new Client({ name: 'test-client', version: '0.0.0' });
  await client.connect(clientSide);
  return {
    server,
    client,
    logs,
    clock,
    call: async (name, args = {}, options) => {
      const { meta, details } = callOptions(options);
      // Only a call with caller details is tagged; any other `_meta` reaches the server exactly as given.
      const _meta = details ? { ...(meta as Record<string, unknown>), [KIT_CALL_KEY]: delivery.expect(details) } : meta;
      const params = { name, arguments: args, ...(_meta ? { _meta } : {}) };
      return client.callTool(params as Parameters<Client['callTool']>[0]);
    },
    listTools: async () => (await client.listTools()).tools,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

const KIT_CALL_KEY = 'dev.sluice/test-kit-call';
const OPTION_KEYS = new Set(['meta', 'authInfo', 'headers']);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The kit's first signature took `_meta` itself as the third argument, and
 * many tests still pass it so: only a record whose keys are all option names,
 * each holding an object, is read as options.
 */
function callOptions(options: KitCallOptions | Record<string, unknown> | undefined): {
  meta: unknown;
  details: CallerDetails | undefined;
} {
  if (options === undefined) return { meta: undefined, details: undefined };
  const keys = Object.keys(options);
  const asOptions =
    keys.length > 0 && keys.every((key) => OPTION_KEYS.has(key) && isRecord((options as Record<string, unknown>)[key]));
  if (!asOptions) return { meta: options, details: undefined };
  const { meta, authInfo, headers } = options as KitCallOptions;
  const details = authInfo || headers ? { authInfo, headers } : undefined;
  return { meta, details };
}

interface CallerDetails {
  readonly authInfo: AuthInfo | undefined;
  readonly headers: Record<string, string> | undefined;
}

/**
 * The in-memory transport passes neither headers nor (from the client) auth
 * info. Each kit call tags its `_meta`; on the server side the tag is removed
 * before the SDK sees the message, and the call's auth info and headers are
 * delivered the way an HTTP transport delivers them.
 */
function deliverCallerDetails(serverSide: InMemoryTransport): { expect(details: CallerDetails): number } {
  const pending = new Map<number, CallerDetails>();
  let next = 0;
  const deliver = serverSide.onmessage;
  if (!deliver) throw new Error('the test kit connects the server before wrapping its transport');
  serverSide.onmessage = (message, extra) => {
    const params: Record<string, unknown> | undefined = 'params' in message ? message.params : undefined;
    const meta = params?._meta as Record<string, unknown> | undefined;
    const tag = meta?.[KIT_CALL_KEY];
    if (typeof tag !== 'number' || !params || !meta) {
      deliver(message, extra);
      return;
    }
    const rest = Object.fromEntries(Object.entries(meta).filter(([key]) => key !== KIT_CALL_KEY));
    const details = pending.get(tag);
    pending.delete(tag);
    const untagged = { ...message, params: { ...params, _meta: rest } } as typeof message;
    deliver(untagged, {
      ...extra,
      ...(details?.authInfo ? { authInfo: details.authInfo } : {}),
      ...(details?.headers
        ? { request: new Request('http://test-kit.invalid/mcp', { method: 'POST', headers: details.headers }) }
        : {}),
    });
  };
  return {
    expect(details) {
      pending.set(++next, details);
      return next;
    },
  };
}

/** The text of a result's text blocks, joined. */
export function textOf(result: CallToolResult): string {
  return result.content
    .filter((block): block is { type: 'text'; text: string } => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

/** The machine-readable refusal in a result, or undefined. */
export function errorOf(result: CallToolResult): RefusalMeta | undefined {
  return readRefusal(result);
}

/** A Sluice `_meta` value of a result. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the type it expects to read, as with Store.get
export function metaOf<T = unknown>(result: CallToolResult, key: string): T | undefined {
  return result._meta?.[key] as T | undefined;
}

export { MetaKey };
