import { CoreErrorCode, SluiceError } from './errors.js';

/** What serving needs of the SDK's server package: see server-sdk.ts. */
export type ServerSdk = typeof import('./server-sdk.js');

let serverSdk: ServerSdk | undefined;
let serverSdkLoading: Promise<ServerSdk> | undefined;

/**
 * Loads the SDK's server package (and what core builds on it) once per
 * process. Every server that can serve a transport starts this when it is
 * built, so that importing core stays light and `createSdkServer()` finds it
 * loaded by the time `ready()` resolves.
 */
export function loadServerSdk(): Promise<ServerSdk> {
  serverSdkLoading ??= import('./server-sdk.js').then((loaded) => (serverSdk = loaded));
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
