import { InMemoryTransport, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import type { Logger } from '@sluice/core';
import type { ResolvedImportOptions } from './options.js';
import { NodeHttpClientTransport } from './node-http-transport.js';
import { budgetedFetch } from './response-limit.js';
import type { StderrTail } from './stderr-tail.js';
import type { UpstreamAuthorizer } from './oauth/authorizer.js';
import { authorizedFetch } from './oauth/authorized-fetch.js';

type Connection = ResolvedImportOptions['connection'];

/** A transport to one upstream, ready for `client.connect()`. */
export interface OpenedTransport {
  readonly transport: Transport;
  /** The child's process id, for stdio once started. */
  pid(): number | undefined;
}

export interface OpenContext {
  readonly upstream: string;
  readonly logger: Logger;
  readonly redact: (text: string) => string;
  /** Keeps a stdio child's last stderr lines, for the warning when it fails. */
  readonly stderrTail?: StderrTail;
  /**
   * The client negotiates the protocol era (versionNegotiation `auto`): over stdio it gets the SDK's own
   * transport, whose probe runs on a disposable sibling process. Otherwise stdio gets StdioChildTransport.
   */
  readonly negotiates?: boolean;
  /** Authenticates HTTP and SSE requests (an OAuth token per request); absent, only static headers are sent. */
  readonly auth?: UpstreamAuthorizer | undefined;
}

/** Builds the transport a connection describes. Each reconnection gets a fresh one. */
export async function openTransport(connection: Connection, ctx: OpenContext): Promise<OpenedTransport> {
  switch (connection.type) {
    case 'in-process':
      return openInProcess(connection.server);
    case 'stdio':
      return openStdio(connection, ctx);
    case 'http':
      if (connection.transport !== 'sdk')
        return {
          transport: new NodeHttpClientTransport(new URL(connection.url), {
            headers: { ...connection.headers },
            ...(connection.maxMessageBytes === undefined ? {} : { maxMessageBytes: connection.maxMessageBytes }),
            auth: ctx.auth,
          }),
          pid: () => undefined,
        };
      return {
        transport: new StreamableHTTPClientTransport(new URL(connection.url), {
          requestInit: { headers: { ...connection.headers } },
          fetch: fetchFor(connection, ctx),
        }),
        pid: () => undefined,
      };
    case 'sse':
      return {
        transport: new SSEClientTransport(new URL(connection.url), {
          // The transport sends these headers on the event stream as well as on each POST.
          requestInit: { headers: { ...connection.headers } },
          fetch: fetchFor(connection, ctx),
        }),
        pid: () => undefined,
      };
  }
}

/** The SDK transports' fetch: bounded, and authorized when the upstream has `auth`. */
function fetchFor(connection: { readonly maxMessageBytes?: number | undefined }, ctx: OpenContext) {
  const bounded = budgetedFetch(connection.maxMessageBytes);
  return ctx.auth === undefined ? bounded : authorizedFetch(ctx.auth, bounded);
}

async function openInProcess(server: Extract<Connection, { type: 'in-process' }>['server']): Promise<OpenedTransport> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide as never);
  return { transport: clientSide, pid: () => undefined };
}

// Loaded on first use: they pull in process spawning, which in-process and HTTP upstreams never need.
let stdioModule: Promise<typeof import('@modelcontextprotocol/client/stdio')> | undefined;
let childModule: Promise<typeof import('./stdio-child-transport.js')> | undefined;

async function openStdio(
  connection: Extract<Connection, { type: 'stdio' }>,
  ctx: OpenContext,
): Promise<OpenedTransport> {
  let opened: OpenedTransport & {
    readonly stderr: { on: (event: 'data', listener: (chunk: Buffer) => void) => unknown } | null;
  };
  if (ctx.negotiates) {
    stdioModule ??= import('@modelcontextprotocol/client/stdio');
    const { StdioClientTransport } = await stdioModule;
    const transport = new StdioClientTransport({
      command: connection.command,
      ...(connection.args ? { args: connection.args } : {}),
      ...(connection.env ? { env: connection.env } : {}),
      ...(connection.cwd ? { cwd: connection.cwd } : {}),
      ...(connection.maxMessageBytes ? { maxBufferSize: connection.maxMessageBytes } : {}),
      stderr: 'pipe',
    });
    opened = { transport, pid: () => transport.pid ?? undefined, stderr: transport.stderr };
  } else {
    childModule ??= import('./stdio-child-transport.js');
    const { StdioChildTransport } = await childModule;
    const transport = new StdioChildTransport({
      command: connection.command,
      ...(connection.args ? { args: connection.args } : {}),
      ...(connection.env ? { env: connection.env } : {}),
      ...(connection.cwd ? { cwd: connection.cwd } : {}),
      ...(connection.maxMessageBytes ? { maxMessageBytes: connection.maxMessageBytes } : {}),
    });
    opened = { transport, pid: () => transport.pid, stderr: transport.stderr };
  }
  // The child's stderr is drained (a full pipe would stall it) and kept at debug level.
  opened.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    ctx.stderrTail?.push(text);
    ctx.logger.debug(
      { event: 'upstream.stderr', upstream: ctx.upstream, text: ctx.redact(text.trimEnd()) },
      'upstream stderr',
    );
  });
  return { transport: opened.transport, pid: () => opened.pid() };
}

/** Where an upstream is, safe to log: no headers, query, credentials, arguments or environment. */
export function describeTarget(connection: Connection): string {
  switch (connection.type) {
    case 'in-process':
      return 'in-process';
    case 'stdio':
      return connection.command;
    case 'http':
    case 'sse': {
      const url = new URL(connection.url);
      return `${url.protocol}//${url.host}${maskedPath(url.pathname)}`;
    }
  }
}

/** Path segments longer than this are shown as `…`: a token in an upstream's path must not reach a page or a log. */
const SHOWN_SEGMENT_CHARS = 12;

/** A URL path as shown to people: each segment longer than a short word masked. */
function maskedPath(pathname: string): string {
  return pathname
    .split('/')
    .map((segment) => (segment.length > SHOWN_SEGMENT_CHARS ? '…' : segment))
    .join('/');
}

/**
 * Values that must never appear in logs or results: header and environment
 * values, URL credentials and query values (decoded and as written).
 */
export function secretsOf(connection: Connection, auth?: ResolvedImportOptions['auth']): string[] {
  const authSecrets = auth === undefined ? [] : [auth.clientSecret];
  return [...authSecrets, ...connectionSecrets(connection)];
}

function connectionSecrets(connection: Connection): string[] {
  if (connection.type === 'stdio') return Object.values(connection.env ?? {});
  if (connection.type === 'http' || connection.type === 'sse') {
    const url = new URL(connection.url);
    // A value like `Bearer <token>` can surface as the bare token.
    const headerValues = Object.values(connection.headers ?? {}).flatMap((value) => [value, ...value.split(/\s+/)]);
    const rawQueryValues = url.search
      .slice(1)
      .split('&')
      .map((pair) => pair.slice(pair.indexOf('=') + 1));
    return [...headerValues, url.password, url.username, ...url.searchParams.values(), ...rawQueryValues].filter(
      Boolean,
    );
  }
  return [];
}
