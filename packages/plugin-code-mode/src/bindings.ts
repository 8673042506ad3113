import type { SluiceTool, Tool } from '@sluice/core';
import { toIdentifier, uniqueIn } from './identifiers.js';
import { schemaToTs } from './schema-to-ts.js';

/** One tool as a script sees it: `server.fn(args)` calls the exposed tool `name`. */
export interface BoundTool {
  /** The identifier of the server object (`everything`, or the local server's name). */
  readonly server: string;
  /** The identifier of the function on it. */
  readonly fn: string;
  /** The exposed tool name the function calls. */
  readonly name: string;
  readonly definition: Tool;
}

/** Every tool a request's script may call, grouped by server. */
export interface Bindings {
  /** Server identifier -> function identifier -> exposed tool name: what the sandbox defines. */
  readonly layout: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly servers: ReadonlyMap<string, readonly BoundTool[]>;
  /** By exposed name, and by `server.fn`. */
  find(ref: string): BoundTool | undefined;
  /** The tool a script's `tools.search(query)` calls: the search tool, when this request's list has it. */
  readonly search: string | undefined;
}

export interface BindingSource {
  /** What `tools/list` shows this request. */
  readonly tools: readonly Tool[];
  /** The exposed tool behind a name, for its source. */
  toolOf(name: string): SluiceTool | undefined;
  /** The name scripts use for local tools. */
  readonly localServer: string;
  /** Names never bound (the meta-tools). */
  readonly exclude: ReadonlySet<string>;
  /**
   * The server's search tool, for `tools.search(query)`: bound only when
   * `tools` lists it, so that a request that may not call it has no trace
   * of it (no `tools` global, no declaration).
   */
  readonly searchTool?: string;
}

/** Groups the tools a request sees by server and gives each a function name. */
export function buildBindings(source: BindingSource): Bindings {
  const byServer = new Map<string, BoundTool[]>();
  const groups = new Map<string, { readonly id: string; readonly tools: BoundTool[]; readonly fns: Set<string> }>();
  const takenServers = new Set<string>();
  const byName = new Map<string, BoundTool>();
  const byRef = new Map<string, BoundTool>();
  for (const definition of source.tools) {
    if (source.exclude.has(definition.name)) continue;
    const tool = source.toolOf(definition.name);
    const serverName = tool?.source.kind === 'upstream' ? tool.source.upstream : source.localServer;
    let group = groups.get(serverName);
    if (group === undefined) {
      group = { id: uniqueIn(takenServers, toIdentifier(serverName)), tools: [], fns: new Set() };
      groups.set(serverName, group);
      byServer.set(group.id, group.tools);
    }
    const fn = uniqueIn(group.fns, toIdentifier(functionName(definition.name, tool)));
    const bound: BoundTool = { server: group.id, fn, name: definition.name, definition };
    group.tools.push(bound);
    byName.set(bound.name, bound);
    byRef.set(`${group.id}.${fn}`, bound);
  }
  const layout: Record<string, Record<string, string>> = Object.create(null) as Record<string, Record<string, string>>;
  for (const [server, tools] of byServer) {
    const fns: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const t of tools) fns[t.fn] = t.name;
    layout[server] = fns;
  }
  const { searchTool } = source;
  const search = searchTool !== undefined && source.tools.some((t) => t.name === searchTool) ? searchTool : undefined;
  return { layout, servers: byServer, find: (ref) => byName.get(ref) ?? byRef.get(ref), search };
}

/**
 * The name a tool goes by inside its server: the upstream's own name when the
 * exposed one only adds a namespace to it, the exposed name otherwise (a
 * local tool, or one a plugin renamed).
 */
function functionName(exposed: string, tool: SluiceTool | undefined): string {
  if (tool?.source.kind !== 'upstream') return exposed;
  const original = tool.source.originalName;
  return exposed === original || exposed.endsWith(original) ? original : exposed;
}

/** The first sentence or line of a description, short enough for a signature comment. */
export function oneLine(description: string | undefined, max = 160): string {
  if (!description) return '';
  const line = description.trim().split(/\r?\n/)[0] ?? '';
  const sentence = /^(.*?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  const cut = sentence.length > max ? `${sentence.slice(0, max - 1)}…` : sentence;
  return cut.replace(/\*\//g, '* /');
}

/** `function fn(args: {...}): Promise<...>;` for one tool. */
export function signature(tool: BoundTool): string {
  const input = schemaToTs(tool.definition.inputSchema);
  const optional = !hasRequired(tool.definition.inputSchema);
  const output = tool.definition.outputSchema ? schemaToTs(tool.definition.outputSchema) : 'ToolText';
  return `function ${tool.fn}(args${optional ? '?' : ''}: ${input}): Promise<${output}>;`;
}

function hasRequired(schema: unknown): boolean {
  const required = (schema as { required?: unknown } | undefined)?.required;
  return Array.isArray(required) && required.length > 0;
}

/** The declarations of some of one server's tools. */
export function declarations(server: string, tools: readonly BoundTool[], docsTool: string): string {
  const lines = [
    `// Call as: await ${server}.<function>({ ...args }). Full docs: ${docsTool}({ tool: "${server}.<function>" }).`,
    `declare namespace ${server} {`,
  ];
  for (const tool of tools) {
    const summary = oneLine(tool.definition.description);
    if (summary) lines.push(`  /** ${summary} */`);
    lines.push(`  ${signature(tool)}`);
  }
  lines.push('}', '');
  return lines.join('\n');
}

/** The globals every script has, before `tools`. */
const RUNTIME_HEAD = `// Globals of every script. The script is the body of an async function: use await, and return a JSON value.
/** What a tool without an output schema returns: its text, or its content blocks when they are not all text. */
type ToolText = string | ToolContent[];
type ToolContent = { type: string; text?: string; data?: string; mimeType?: string; [key: string]: unknown };
/** Thrown by a tool call that failed or was refused; \`code\` is the refusal code (e.g. SERVER_BUSY, LOOP_DETECTED). */
declare class ToolError extends Error {
  readonly code: string;
  readonly retryAfterMs?: number;
  [detail: string]: unknown;
}
/** Calls a tool by its exposed name. */
declare function callTool(name: string, args?: Record<string, unknown>): Promise<unknown>;
`;

/** `tools.search`: declared only to a request whose list has the search tool, as it is bound only for one. */
const SEARCH_DECLARATION = `/** The server's tool search: the tools you may call that can do a task, best match first; call one with callTool(name, args). */
declare const tools: {
  search(query: string, limit?: number): Promise<{ name: string; summary: string; upstream?: string; risk?: string; score: number }[]>;
};
`;

/** The globals every script has, after `tools`. */
const RUNTIME_TAIL = `/** On a server that imports resources: reads one as a request of your own (the same policy applies). */
declare const resources: {
  read(uri: string): Promise<{ contents: { uri: string; mimeType?: string; text?: string; blob?: string }[] }>;
};
/** On a server that imports prompts: gets one as a request of your own (the same policy applies). */
declare const prompts: {
  get(name: string, args?: Record<string, string>): Promise<{ description?: string; messages: { role: string; content: ToolContent }[] }>;
};
/** Output shown in the result's logs. */
declare const console: { log(...values: unknown[]): void; info(...values: unknown[]): void; warn(...values: unknown[]): void; error(...values: unknown[]): void; debug(...values: unknown[]): void };
`;

const RUNTIME = RUNTIME_HEAD + RUNTIME_TAIL;
const RUNTIME_WITH_SEARCH = RUNTIME_HEAD + SEARCH_DECLARATION + RUNTIME_TAIL;

/** What a request's scripts can use besides the servers' functions: `tools.search` only when its bindings have it. */
export function runtimeDeclarations(bindings: Pick<Bindings, 'search'>): string {
  return bindings.search === undefined ? RUNTIME : RUNTIME_WITH_SEARCH;
}

/** Paths of the binding files at a binding level. */
export const RUNTIME_FILE = 'runtime.d.ts';

export function filePaths(bindings: Bindings, level: 'server' | 'tool'): string[] {
  const paths = [RUNTIME_FILE];
  for (const [server, tools] of bindings.servers) {
    if (level === 'server') paths.push(`servers/${server}.d.ts`);
    else for (const tool of tools) paths.push(`servers/${server}/${tool.fn}.d.ts`);
  }
  return paths;
}

/** The content of one binding file, or undefined when the path names none. */
export function readFile(
  bindings: Bindings,
  level: 'server' | 'tool',
  path: string,
  docsTool: string,
): string | undefined {
  if (path === RUNTIME_FILE) return runtimeDeclarations(bindings);
  const match = /^servers\/([A-Za-z0-9_$]+)(?:\/([A-Za-z0-9_$]+))?\.d\.ts$/.exec(path);
  if (!match) return undefined;
  const server = match[1] ?? '';
  const fn = match[2];
  const tools = bindings.servers.get(server);
  if (!tools) return undefined;
  if (level === 'server') return fn === undefined ? declarations(server, tools, docsTool) : undefined;
  const tool = tools.find((t) => t.fn === fn);
  return tool ? declarations(server, [tool], docsTool) : undefined;
}

/** The full documentation of one tool. */
export function toolDocs(tool: BoundTool): string {
  const d = tool.definition;
  const parts = [
    `${tool.server}.${tool.fn} (exposed tool "${tool.name}")`,
    ...(d.title ? [`Title: ${d.title}`] : []),
    '',
    d.description ?? '(no description)',
    '',
    'Signature:',
    `  ${signature(tool)}`,
    '',
    `Input schema: ${JSON.stringify(d.inputSchema, null, 2)}`,
  ];
  if (d.outputSchema) parts.push(`Output schema: ${JSON.stringify(d.outputSchema, null, 2)}`);
  if (d.annotations) parts.push(`Annotations: ${JSON.stringify(d.annotations)}`);
  return parts.join('\n');
}
