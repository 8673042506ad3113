import type { Readable, Writable } from 'node:stream';
import type { Server as SdkServer } from '@modelcontextprotocol/server';
import { importServerPackage, importServerStdio } from './server-sdk-loader.js';
import { StdioLineTransport } from './stdio-transport.js';
import type { Logger } from './logger.js';
import type { TransportHooks } from './transport-hooks.js';
import { sendChange } from './transport-hooks.js';

export interface StdioOptions {
  /** Default `process.stdin`. */
  stdin?: Readable;
  /** Default `process.stdout`. Nothing else may write to it. */
  stdout?: Writable;
}

export interface StdioHandle {
  close(): Promise<void>;
}

interface StdioHost {
  readonly logger: Logger;
  createSdkServer(transport: 'stdio'): SdkServer;
}

/**
 * stdio for both protocol versions; the SDK pins one server instance per connection. The SDK's server package
 * is loaded as the server loader loads it (see server-sdk-loader.ts): a served server has loaded it already.
 */
export async function serveOverStdio(
  host: StdioHost,
  options: StdioOptions,
  hooks: TransportHooks,
): Promise<StdioHandle> {
  const [sdk, { serveStdio }] = await Promise.all([importServerPackage(), importServerStdio()]);
  const instances = new Set<SdkServer>();
  const transport = new StdioLineTransport(sdk, options.stdin, options.stdout);
  const handle = serveStdio(
    () => {
      const sdk = host.createSdkServer('stdio');
      instances.add(sdk);
      return sdk;
    },
    {
      legacy: 'serve',
      transport,
      onerror: (error) => host.logger.debug({ event: 'stdio.error', err: error }, 'stdio transport error'),
    },
  );
  const detachNotify = hooks.onListChanged((change) => {
    for (const sdk of instances) sendChange(sdk, change);
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      detachNotify();
      detachClose();
      await handle.close();
      instances.clear();
    })();
    return closing;
  };
  const detachClose = hooks.onClose(close);
  return { close };
}
