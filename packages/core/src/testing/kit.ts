import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import type { Plugin } from '../plugin.js';
import type { CallToolResult, Tool } from '../protocol.js';
import { MetaKey } from '../meta.js';
import { readRefusal } from '../refusal.js';
import type { RefusalMeta } from '../refusal.js';
import type { SchemaInput } from '../schema.js';
import type { ServerOptions } from '../server-options.js';
import { SluiceServer, internalsOf } from '../server.js';
import type { ImportResult, ToolDraft } from '../tool-table.js';
import type { ImportSource } from '../tool.js';
import type { Store } from '../store/types.js';
import type { ToolDefinition } from '../tool.js';
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

export interface TestKit {
  readonly server: TestServer;
  /** A real SDK client connected in-process. */
  readonly client: Client;
  /** Every log record the server and its plugins wrote. */
  readonly logs: CapturedLogger;
  /** The fake clock, when `fakeClock: true`. */
  readonly clock: FakeClock | undefined;
  /** Calls a tool through the client, as a model would. */
  call(name: string, args?: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult>;
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
  for (const tool of options.tools ?? []) server.tool(tool as ToolDefinition<SchemaInput | undefined>);
  await server.ready();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-client', version: '0.0.0' });
  await client.connect(clientSide);
  return {
    server,
    client,
    logs,
    clock,
    call: async (name, args = {}, meta) =>
      (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult,
    listTools: async () => (await client.listTools()).tools,
    close: async () => {
      await client.close();
      await server.close();
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
export function metaOf<T = unknown>(result: CallToolResult, key: string): T | undefined {
  return result._meta?.[key] as T | undefined;
}

export { MetaKey };
