import type { Server } from '@modelcontextprotocol/server';
import type { Transport } from './context.js';
import { CoreErrorCode, SluiceError } from './errors.js';
import { COMMONJS_BUILD, requireCjs } from './require-cjs.js';
import type { SdkServerParts } from './server-sdk.js';
import type { sendChange } from './transport-hooks.js';

/** What serving needs of the SDK's server package: see server-sdk.ts. */
export interface ServerSdk {
  buildSdkServer(parts: SdkServerParts, transport: Transport): Server;
  readonly sendChange: typeof sendChange;
}

/** The SDK package a full server is served by: an optional peer of core, which `adopt()` never needs. */
export const SERVER_SDK_PACKAGE = '@modelcontextprotocol/server';

let serverSdk: ServerSdk | undefined;
let serverSdkLoading: Promise<ServerSdk> | undefined;

/**
 * Loads the SDK's server package (and what core builds on it) once per
 * process. Every server that can serve a transport starts this when it is
 * built, so that importing core stays light and `createSdkServer()` finds it
 * loaded by the time `ready()` resolves. Without the package installed, it
 * rejects with the way to install it.
 */
export function loadServerSdk(): Promise<ServerSdk> {
  serverSdkLoading ??= Promise.all([importServerPackage(), import('./server-sdk.js')]).then(
    ([classes, glue]) =>
      (serverSdk = {
        buildSdkServer: (parts, transport) => glue.buildSdkServer(classes, parts, transport),
        sendChange: glue.sendChange,
      }),
  );
  return serverSdkLoading;
}

type ServerPackage = typeof import('@modelcontextprotocol/server');
type ServerStdio = typeof import('@modelcontextprotocol/server/stdio');

/**
 * The SDK's server package, imported by its name: a bundler carries it in
 * when it is installed and leaves it out when it is not (a bundle that only
 * adopts never needs it); each import catches its own failure, which is
 * what tells a bundler the package may be absent. Core's CommonJS build
 * requires it instead, so that a CommonJS program and core share its
 * CommonJS copy (one copy of its classes).
 */
export function importServerPackage(): Promise<ServerPackage> {
  if (COMMONJS_BUILD)
    return Promise.resolve()
      .then(() => requireCjs('@modelcontextprotocol/server') as ServerPackage)
      .catch(whenMissing);
  return import('@modelcontextprotocol/server').catch(whenMissing);
}

/** The SDK server package's stdio entry, loaded as `importServerPackage()` loads the package. */
export function importServerStdio(): Promise<ServerStdio> {
  if (COMMONJS_BUILD)
    return Promise.resolve()
      .then(() => requireCjs('@modelcontextprotocol/server/stdio') as ServerStdio)
      .catch(whenMissing);
  return import('@modelcontextprotocol/server/stdio').catch(whenMissing);
}

/** Rethrows a failed import of the SDK's server package, as the way to install it when it is not installed. */
export function whenMissing(error: unknown): never {
  throw isMissing(error, SERVER_SDK_PACKAGE) ? serverSdkMissing(error) : error;
}

/** The SDK's server package, once loaded; before that, an error that says what to wait for. */
export function loadedServerSdk(): ServerSdk {
  if (serverSdk !== undefined) return serverSdk;
  throw new SluiceError(
    CoreErrorCode.INVALID_STATE,
    "The MCP SDK's server package has not loaded yet: await server.ready() before createSdkServer()",
  );
}

/** The error of a server built by createServer() in a project without the SDK's server package. */
export function serverSdkMissing(cause: unknown): SluiceError {
  return new SluiceError(
    CoreErrorCode.INVALID_STATE,
    `createServer() serves through the MCP SDK's server package, which is not installed: install it beside @sluice/core (npm install ${SERVER_SDK_PACKAGE}). adopt() does not need it.`,
    { cause },
  );
}

/**
 * Whether an import failed because the named package itself cannot be found
 * (not a module inside it, nor one it imports): Node's ESM and CommonJS
 * loaders both name it in quotes.
 */
export function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && message.includes(`'${name}'`);
}
