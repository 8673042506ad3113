import type { Readable, Writable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/server';
import { CoreErrorCode, SluiceError } from './errors.js';
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

// A capability, not state: which code serves HTTP, the same for every server of this copy of core.
let serving: HttpServing | undefined;

/** Called by `@sluice/http` as it loads. */
export function provideHttpServing(provided: HttpServing): void {
  serving = provided;
}

/** The HTTP serving `@sluice/http` provided; throws the way to get it when no import did. */
export function httpServing(): HttpServing {
  if (serving === undefined) {
    throw new SluiceError(
      CoreErrorCode.INVALID_STATE,
      "server.listen() is served by @sluice/http: install it and import it once in the program (import '@sluice/http')",
    );
  }
  return serving;
}

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

let stdio: StdioServing | undefined;

/** Called by `@sluice/stdio` as it loads. */
export function provideStdioServing(provided: StdioServing): void {
  stdio = provided;
}

/** The stdio serving `@sluice/stdio` provided; throws the way to get it when no import did. */
export function stdioServing(): StdioServing {
  if (stdio === undefined) {
    throw new SluiceError(
      CoreErrorCode.INVALID_STATE,
      "server.serveStdio() is served by @sluice/stdio: install it and import it once in the program (import '@sluice/stdio')",
    );
  }
  return stdio;
}
