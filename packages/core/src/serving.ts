import type { Readable, Writable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/server';
import { capability } from './capability.js';
import type { Logger } from './logger.js';
import type { AuthInfo } from './protocol.js';
import type { Store } from './store/types.js';
import type { TransportHooks } from './transport-hooks.js';

/**
 * What `server.listen()` takes. Empty in core: `@sluice/http` fills it in
 * (declaration merging) in every program that imports it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declared by @sluice/http
export interface ListenOptions {}

/** What `server.listen()` returns; declared by `@sluice/http`, like `ListenOptions`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declared by @sluice/http
export interface HttpListener {}

/** What the listener needs of the server it serves. */
export interface HttpHost {
  readonly logger: Logger;
  createSdkServer(transport: 'http'): Server;
  /** Admits a listen filter's resource URIs as subscriptions of this caller (canonical URIs back), or rejects. */
  admitListen?(
    uris: readonly string[],
    caller: { authInfo: AuthInfo | undefined; headers: Record<string, string>; signal: AbortSignal },
  ): Promise<string[]>;
  /** A store with a message bus keeps 2025-11-25 sessions fleet-wide (see `LegacySessions` in `@sluice/http`). */
  readonly services?: { readonly store: Store };
}

/** How `server.listen()` serves: given by `@sluice/http` when it is imported. */
export interface HttpServing {
  listen(server: HttpHost, options: ListenOptions, hooks: TransportHooks): Promise<HttpListener>;
}

const http = capability<HttpServing>('server.listen()', '@sluice/http');
/** Called by `@sluice/http` as it loads. */
export const provideHttpServing = http.provide;
/** The HTTP serving `@sluice/http` provided; throws the way to get it when no import did. */
export const httpServing = http.get;

export interface StdioOptions {
  /** Default `process.stdin`. */
  stdin?: Readable;
  /** Default `process.stdout`. Nothing else may write to it. */
  stdout?: Writable;
}

export interface StdioHandle {
  close(): Promise<void>;
}

/** What serving stdio needs of the server it serves. */
export interface StdioHost {
  readonly logger: Logger;
  createSdkServer(transport: 'stdio'): Server;
}

/** How `server.serveStdio()` serves: given by `@sluice/stdio` when it is imported. */
export interface StdioServing {
  serve(server: StdioHost, options: StdioOptions, hooks: TransportHooks): Promise<StdioHandle>;
}

const stdio = capability<StdioServing>('server.serveStdio()', '@sluice/stdio');
/** Called by `@sluice/stdio` as it loads. */
export const provideStdioServing = stdio.provide;
/** The stdio serving `@sluice/stdio` provided; throws the way to get it when no import did. */
export const stdioServing = stdio.get;
