import type { Server } from '@modelcontextprotocol/server';
import type { Transport } from './context.js';
import { CoreErrorCode, SluiceError } from './errors.js';
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
 * rejects with the way to install it. The package is imported by its name,
 * as an expression: a bundler carries it in when it is installed, and
 * leaves it out when it is not (a bundle that only adopts never needs it).
 */
export function loadServerSdk(): Promise<ServerSdk> {
  serverSdkLoading ??= Promise.all([import('@modelcontextprotocol/server'), import('./server-sdk.js')]).then(
    ([classes, glue]) =>
      (serverSdk = {
        buildSdkServer: (parts, transport) => glue.buildSdkServer(classes, parts, transport),
        sendChange: glue.sendChange,
      }),
    (error: unknown) => {
      throw isMissing(error, SERVER_SDK_PACKAGE) ? serverSdkMissing(error) : error;
    },
  );
  return serverSdkLoading;
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
