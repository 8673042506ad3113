import { RpcCode, compileSchema, parseOptions, readRefusal } from '@sluice/core';
import type { CallToolResult, CompiledSchema, Tool } from '@sluice/core';
import type { ChainStep } from './chain-record.js';
import { ChainRules } from './chain-rules.js';
import { ChainState } from './chain-state.js';
import type { ChainStop } from './chain-stop.js';
import { stops } from './chain-stop.js';
import type { NextTool } from './directive.js';
import { hasDirective } from './directive.js';
import { followChain } from './follow-chain.js';
import { ClientChainingOptions } from './options.js';
import type { ChainTarget } from './vet-next.js';

interface RequestOptions {
  signal?: AbortSignal;
}

/**
 * What `callToolWithChaining` needs from an MCP client. A `Client` from
 * `@modelcontextprotocol/client` has both methods; nothing else is needed.
 */
export interface ChainingClient {
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    options?: RequestOptions,
  ): Promise<CallToolResult>;
  listTools(params?: { cursor?: string }, options?: RequestOptions): Promise<{ tools: Tool[]; nextCursor?: string }>;
}

const MAX_LIST_PAGES = 64;

/**
 * Calls a tool and runs the chain its result asks for (`_meta` keys
 * `dev.sluice/nextTool`, `nextTool`, `openai/nextTool`), for servers that
 * emit next-tool directives but do not run them. Same checks as the plugin:
 * the next tool must be in the server's `tools/list`, its arguments must
 * match that tool's input schema, the depth is capped and cycles are
 * refused. Returns the last result with `_meta["dev.sluice/chain"]`, or an
 * `isError` result that shows the chain so far and why it stopped.
 */
export async function callToolWithChaining(
  client: ChainingClient,
  name: string,
  args: Record<string, unknown> = {},
  options: ClientChainingOptions = {},
): Promise<CallToolResult> {
  const config = parseOptions('callToolWithChaining', ClientChainingOptions, options);
  const rules = new ChainRules(config);
  const request: RequestOptions | undefined = config.signal ? { signal: config.signal } : undefined;
  const first = await client.callTool({ name, arguments: args }, request);
  if (!hasDirective(first) || readRefusal(first) !== undefined || !rules.follows(name)) return first;
  const targets = new ServerTools(client, rules, request);
  const onStep = config.onStep;
  return followChain(
    {
      state: new ChainState(name, args, config.maxDepth),
      target: (tool) => targets.target(tool),
      continues: (tool) => rules.follows(tool),
      call: (next) => client.callTool({ name: next.tool, arguments: next.arguments }, request),
      stopFor: rejectedStop,
      ...(config.signal ? { signal: config.signal } : {}),
      ...(onStep ? { observer: { step: (step: ChainStep) => onStep(step) } } : {}),
    },
    { tool: name, result: first },
  );
}

/** A JSON-RPC "invalid params" answer (unknown tool, bad arguments) stops the chain; other failures propagate. */
function rejectedStop(error: unknown, next: NextTool): ChainStop | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== RpcCode.INVALID_PARAMS) return undefined;
  return stops.rejected(next, error instanceof Error ? error.message : 'invalid params');
}

/** The server's tools, listed once per chain, on the first directive; input schemas compiled on first use. */
class ServerTools {
  private listing: Promise<Map<string, Tool>> | undefined;
  private readonly targets = new Map<string, ChainTarget>();

  constructor(
    private readonly client: ChainingClient,
    private readonly rules: ChainRules,
    private readonly request: RequestOptions | undefined,
  ) {}

  async target(name: string): Promise<ChainTarget | undefined> {
    const known = this.targets.get(name);
    if (known) return known;
    const tool = (await (this.listing ??= this.list())).get(name);
    if (tool === undefined) return undefined;
    let schema: CompiledSchema | null | undefined;
    const target: ChainTarget = {
      name,
      allowed: this.rules.targetable(name),
      validate: (args) => {
        schema ??= compileOrNull(tool);
        return schema === null ? { ok: true, value: args } : schema.validate(args);
      },
    };
    this.targets.set(name, target);
    return target;
  }

  private async list(): Promise<Map<string, Tool>> {
    const tools = new Map<string, Tool>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const listed = await this.client.listTools(cursor === undefined ? undefined : { cursor }, this.request);
      for (const tool of listed.tools) tools.set(tool.name, tool);
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }
}

/** A schema that does not compile here is left to the server to enforce. */
function compileOrNull(tool: Tool): CompiledSchema | null {
  try {
    return compileSchema(tool.inputSchema, 'input', tool.name);
  } catch {
    return null;
  }
}
