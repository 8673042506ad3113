import type http from 'node:http';
import type { Server } from '@modelcontextprotocol/server';
import type { DependencyContainer } from 'tsyringe';
import type { Services } from './container.js';
import type { Transport } from './context.js';
import { capability } from './capability.js';
import type { ListenCaller } from './features/feature-guards.js';
import type { CoreHooks } from './hooks.js';
import type { Logger } from './logger.js';
import type { ServerContext } from './protocol.js';
import type { ImportResult, ToolTable } from './tool-table.js';
import type { ListChange } from './transport-hooks.js';

/**
 * What `server.import()` takes. Empty in core: `@sluice/upstream` fills it in
 * (declaration merging) in every program that imports it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declared by @sluice/upstream
export interface ImportOptions {}

/** One imported upstream and its health, as `server.upstreams()` lists it; declared by `@sluice/upstream`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declared by @sluice/upstream
export interface UpstreamStatus {}

/** The resources, templates and prompts of imported upstreams (`server.features`); declared by `@sluice/upstream`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declared by @sluice/upstream
export interface ImportedFeatures {}

/**
 * The vault that seals the grants of `per_user` upstreams: `CredentialVault`
 * of `@sluice/upstream`, which fills this in (declaration merging). Core only
 * hands it on to the import.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declared by @sluice/upstream
export interface CredentialVault {}

/** What the upstream import needs of the server it imports into. */
export interface UpstreamHost {
  readonly name: string;
  readonly version: string;
  readonly logger: Logger;
  readonly services: Services;
  readonly hooks: CoreHooks;
  readonly container: DependencyContainer;
  readonly table: ToolTable;
  /** `roundStateSecret` of the server's options, when given. */
  readonly roundStateSecret: string | undefined;
  /** The vault of `per_user` upstreams, when the server was given one. */
  readonly credentialVault: CredentialVault | undefined;
  /** Tells connected clients that a list (or a resource) changed. */
  notify(change: ListChange): void;
  isClosed(): boolean;
  /** Registers something to close with the server. */
  onClose(close: () => Promise<void>): () => void;
}

/** The consent page and callback of `per_user` upstreams, served by the HTTP listener. */
export interface ConsentServing {
  routes(): Record<string, http.RequestListener>;
  /** Told the listener's URL once it listens. */
  listening(url: URL): void;
}

/** One server's upstreams, as `@sluice/upstream` keeps them. */
export interface ServerUpstreams {
  import(options: ImportOptions): Promise<ImportResult>;
  /** Undefined until the first import. */
  readonly features: ImportedFeatures | undefined;
  list(): readonly UpstreamStatus[];
  /** Registers the handlers of imported features on an SDK server the server creates. */
  serveFeatures(sdk: Server, transport: Transport): void;
  /** The request context a tool call's pipeline sees (a round the proxy sealed shows what it carried). */
  presentRound(mcp: ServerContext): ServerContext;
  /** Admits a 2026-07-28 listen filter's resource URIs; see `SluiceServer.admitListen`. */
  admitListen(uris: readonly string[], caller: ListenCaller): Promise<string[]>;
  /** The consent routes of `per_user` upstreams, when the server has a vault. */
  consent(): Promise<ConsentServing | undefined>;
  /**
   * With `per_user` upstreams (a vault): passes on the answer `sdk` gives a
   * client as it is; when that answer is a URL elicitation (-32042) of a
   * consent link, the client is told `notifications/elicitation/complete`
   * once the consent completes. Every request kind answers through it: tool
   * calls here, resource reads, prompt gets and completions where
   * `serveFeatures` serves them. Undefined without a vault.
   */
  readonly watchConsent: (<T>(sdk: Server, answer: Promise<T>) => Promise<T>) | undefined;
}

/** How `server.import()` imports: given by `@sluice/upstream` when it is imported. */
export interface UpstreamImporting {
  attach(host: UpstreamHost): ServerUpstreams;
}

const importing = capability<UpstreamImporting>('server.import()', '@sluice/upstream');
/** Called by `@sluice/upstream` as it loads. */
export const provideUpstreamImporting = importing.provide;
/** Whether `@sluice/upstream` was imported in this program. */
export const upstreamImportingProvided = (): boolean => importing.provided() !== undefined;
/** The upstream import `@sluice/upstream` provided; throws the way to get it when no import did. */
export const upstreamImporting = importing.get;
