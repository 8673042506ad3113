import { z } from 'zod';
import { CoreErrorCode, SluiceError } from '@sluice/core';
import { formatIssues } from '@sluice/core';
import { UpstreamAuthSchema } from './oauth/options.js';

/**
 * An SDK server object to import in-process: a v2 `McpServer` or `Server`
 * (`@modelcontextprotocol/server`) or a v1 `McpServer`
 * (`@modelcontextprotocol/sdk`). Sluice links it with an in-memory
 * transport; the server must not be connected elsewhere meanwhile.
 */
export interface InProcessServer {
  // `never`: any SDK's transport type fits; Sluice hands it an in-memory transport.
  connect(transport: never): Promise<void>;
  close?(): Promise<void>;
}

const isInProcessServer = (value: unknown): value is InProcessServer =>
  typeof value === 'object' && value !== null && typeof (value as { connect?: unknown }).connect === 'function';

const StringRecord = z.record(z.string(), z.string());

const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' });

/** An upstream spoken to over stdio: Sluice spawns the command and owns the child. */
export const StdioConnectionSchema = z
  .object({
    type: z.literal('stdio').describe('Sluice spawns the command and speaks MCP over its stdin and stdout.'),
    command: z.string().min(1).describe('The program to run.'),
    args: z.array(z.string()).optional().describe('Its arguments.'),
    /** Added to a minimal inherited environment (PATH, HOME, ...), never the whole of Sluice's. */
    env: StringRecord.optional().describe(
      "Added to a minimal inherited environment (PATH, HOME, ...), never the whole of Sluice's.",
    ),
    cwd: z.string().min(1).optional().describe("Its working directory (default: the gateway's)."),
    /** The largest single message read from the child; a larger one closes the connection. Default 10 MiB. */
    maxMessageBytes: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('The largest single message read from the child; a larger one closes the connection. Default 10 MiB.'),
    /**
     * Starts a second process of the same command for 2026-07-28 callers, so that their input-required round
     * trips cross (one stdio connection speaks one protocol revision, and the first speaks 2025-11-25). Only for
     * a server that keeps no state between calls: the two processes share none. Default false.
     */
    modernProcess: z
      .boolean()
      .optional()
      .describe(
        'Start a second process of the same command for 2026-07-28 callers, so that their input-required round trips cross (one stdio connection speaks one protocol revision, and the first speaks 2025-11-25). Only for a server that keeps no state between calls: the two processes share none. Default false.',
      ),
  })
  .strict();

/**
 * The largest single message read from an HTTP upstream: a JSON answer as a whole, an event-stream event
 * by event (answers and the standalone GET stream alike). Past it, reading stops. Default 10 MiB.
 */
const MaxMessageBytes = z
  .number()
  .int()
  .positive()
  .optional()
  .describe(
    'The largest single message read from the upstream (a JSON answer, or one event of a stream); past it, reading stops. Default 10 MiB.',
  );
const UpstreamUrl = HttpUrl.describe("The upstream's MCP endpoint.");
const UpstreamHeaders = StringRecord.optional().describe(
  'Headers sent with every request (credentials: use `${VAR}`).',
);

/** An upstream spoken to over Streamable HTTP. */
export const HttpConnectionSchema = z
  .object({
    type: z.literal('http').describe('Streamable HTTP.'),
    url: UpstreamUrl,
    headers: UpstreamHeaders,
    maxMessageBytes: MaxMessageBytes,
    /**
     * The client transport: `node` (default) speaks Streamable HTTP over node:http keep-alive sockets and
     * reads a JSON answer in one piece; `sdk` uses the MCP SDK's own client transport (fetch and web streams).
     */
    transport: z
      .enum(['node', 'sdk'])
      .default('node')
      .describe("The client transport: 'node' (node:http keep-alive sockets) or 'sdk' (the MCP SDK's own)."),
  })
  .strict();

/** An upstream spoken to over the legacy HTTP+SSE transport. */
export const SseConnectionSchema = z
  .object({
    type: z.literal('sse').describe('The legacy HTTP+SSE transport.'),
    url: UpstreamUrl,
    headers: UpstreamHeaders,
    maxMessageBytes: MaxMessageBytes,
  })
  .strict();

/** An SDK server object in this process. */
export const InProcessConnectionSchema = z
  .object({
    type: z.literal('in-process'),
    server: z.custom<InProcessServer>(isInProcessServer, {
      error: 'must be an SDK server object with a connect(transport) method',
    }),
  })
  .strict();

export const UpstreamConnectionSchema = z.discriminatedUnion('type', [
  InProcessConnectionSchema,
  StdioConnectionSchema,
  HttpConnectionSchema,
  SseConnectionSchema,
]);

export type UpstreamConnection = z.input<typeof UpstreamConnectionSchema>;
export type UpstreamTransportType = UpstreamConnection['type'];

/** Upstream names appear in logs, health and `x-sluice-*-servers` headers. */
const UPSTREAM_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** A namespace becomes part of tool names, so it uses only tool-name characters. */
const NAMESPACE = /^[A-Za-z0-9_.-]{1,64}$/;

const Globs = z.array(z.string().min(1).max(256)).max(256);

export const ImportOptionsSchema = z
  .object({
    /** How Sluice names this upstream: in tool sources, health, logs and server filters. Unique per server. */
    name: z
      .string()
      .regex(UPSTREAM_NAME, 'use 1-64 letters, digits, "_", "-" or "."')
      .describe('How Sluice names this upstream: in tool sources, health, logs and server filters. Unique per server.'),
    /** How to reach the upstream: `stdio`, `http` or `sse` (or `in-process` in code). */
    connection: UpstreamConnectionSchema.describe(
      'How to reach the upstream: `stdio`, `http` or `sse` (or `in-process` in code).',
    ),
    /** How Sluice authenticates to an `http` or `sse` upstream beyond static headers: an OAuth grant. */
    auth: UpstreamAuthSchema.optional().describe(
      'How Sluice authenticates to an `http` or `sse` upstream beyond static headers: an OAuth grant.',
    ),
    /** Prefix for the exposed names: `${namespace}${separator}${originalName}`. Default: none. */
    namespace: z
      .string()
      .regex(NAMESPACE, 'use 1-64 letters, digits, "_", "-" or "."')
      .optional()
      .describe('Prefix for the exposed names: `${namespace}${separator}${originalName}`. Default: none.'),
    /** Between namespace and original name. Default `_`, which every client accepts in tool names. */
    separator: z
      .enum(['_', '.', '-'])
      .default('_')
      .describe('Between namespace and original name. Default `_`, which every client accepts in tool names.'),
    /** Globs over the upstream's own tool names; when given, only matching tools are imported. */
    allowTools: Globs.optional().describe(
      "Globs over the upstream's own tool names; when given, only matching tools are imported.",
    ),
    /** Globs over the upstream's own tool names; matching tools are never imported (wins over allowTools). */
    denyTools: Globs.optional().describe(
      "Globs over the upstream's own tool names; matching tools are never imported (wins over allowTools).",
    ),
    /** Globs over the upstream's own prompt names; when given, only matching prompts are imported. */
    allowPrompts: Globs.optional().describe(
      "Globs over the upstream's own prompt names; when given, only matching prompts are imported.",
    ),
    /** Globs over the upstream's own prompt names; matching prompts are never imported (wins over allowPrompts). */
    denyPrompts: Globs.optional().describe(
      "Globs over the upstream's own prompt names; matching prompts are never imported (wins over allowPrompts).",
    ),
    /** Globs over resource URIs and URI templates; when given, only matching ones are imported. */
    allowResources: Globs.optional().describe(
      'Globs over resource URIs and URI templates; when given, only matching ones are imported.',
    ),
    /** Globs over resource URIs and URI templates; matching ones are never imported (wins over allowResources). */
    denyResources: Globs.optional().describe(
      'Globs over resource URIs and URI templates; matching ones are never imported (wins over allowResources).',
    ),
    /** Per-call limit, in ms. Default 60 000. */
    timeoutMs: z
      .number()
      .int()
      .positive()
      .max(86_400_000)
      .default(60_000)
      .describe('Per-call limit, in ms. Default 60 000.'),
    /**
     * Limit for the handshake and each list, in ms. Default 60 000 for `stdio` (time for a first `npx -y` download),
     * 10 000 otherwise.
     */
    connectTimeoutMs: z
      .number()
      .int()
      .positive()
      .max(600_000)
      .optional()
      .describe(
        'Limit for the handshake and each list, in ms. Default 60 000 for `stdio` (time for a first `npx -y` download), 10 000 otherwise.',
      ),
    /**
     * Further values to hide wherever text from this upstream reaches logs or results (e.g. a token passed in a
     * stdio `args` entry), in every form they travel in. Header, environment, URL credential and query values
     * are hidden already.
     */
    redact: z
      .array(z.string().min(1).max(4_096))
      .max(256)
      .optional()
      .describe(
        'Further values to hide wherever text from this upstream reaches logs or results (e.g. a token passed in a stdio `args` entry), in every form they travel in. Header, environment, URL credential and query values are hidden already.',
      ),
    /** Whether the operator vouches for this upstream (plugins may then believe its annotations). Default false. */
    trusted: z
      .boolean()
      .default(false)
      .describe(
        'Whether the operator vouches for this upstream (plugins may then believe its annotations). Default false.',
      ),
    /** Reconnection backoff: exponential from `initialDelayMs`, capped at `maxDelayMs`, with jitter. */
    retry: z
      .object({
        initialDelayMs: z
          .number()
          .int()
          .positive()
          .default(500)
          .describe('The first delay before reconnecting, in ms.'),
        maxDelayMs: z.number().int().positive().default(30_000).describe('The longest delay between attempts, in ms.'),
      })
      .strict()
      .prefault({})
      .describe('Reconnection backoff: exponential from `initialDelayMs`, capped at `maxDelayMs`, with jitter.'),
  })
  .strict();

/** What `server.import()` takes. */
export type ImportOptions = z.input<typeof ImportOptionsSchema>;
/** Import options with their defaults filled in. */
export type ResolvedImportOptions = z.output<typeof ImportOptionsSchema>;

/** Parses import options; bad options throw a SluiceError naming each bad field (never echoing values). */
export function parseImportOptions(options: unknown): ResolvedImportOptions {
  // Parsed once per upstream: zod's compiled fast path for object schemas would cost more than it saves.
  const parsed = ImportOptionsSchema.safeParse(options, { jitless: true });
  if (parsed.success) {
    const { retry } = parsed.data;
    if (retry.maxDelayMs < retry.initialDelayMs)
      throw invalid(options, 'retry.maxDelayMs: must be at least retry.initialDelayMs');
    const authProblem = authConflict(parsed.data);
    if (authProblem !== undefined) throw invalid(options, authProblem);
    return parsed.data;
  }
  throw invalid(options, formatIssues(parsed.error));
}

/** `auth` needs an HTTP connection, and owns the `Authorization` header. */
function authConflict({ auth, connection }: ResolvedImportOptions): string | undefined {
  if (auth === undefined) return undefined;
  if (connection.type !== 'http' && connection.type !== 'sse')
    return 'auth: applies to `http` and `sse` connections only';
  if (Object.keys(connection.headers ?? {}).some((name) => name.toLowerCase() === 'authorization'))
    return 'auth: remove the static `authorization` header; `auth` supplies it';
  // A caller's own token rides on each call's request, which only Sluice's node:http transport carries.
  if (auth.type !== 'client_credentials' && (connection.type !== 'http' || connection.transport !== 'node'))
    return `auth: ${auth.type} needs an \`http\` connection with the default transport ('node')`;
  return undefined;
}

function invalid(options: unknown, detail: string): SluiceError {
  const name = (options as { name?: unknown } | null)?.name;
  const which = typeof name === 'string' && UPSTREAM_NAME.test(name) ? ` for upstream "${name}"` : '';
  return new SluiceError(CoreErrorCode.INVALID_OPTIONS, `Invalid import options${which}: ${detail}`, {
    hook: 'import',
  });
}
