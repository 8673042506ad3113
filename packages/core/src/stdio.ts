import type { Readable, Writable } from 'node:stream';
import type { Server as SdkServer } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Logger } from './logger.js';
import type { TransportHooks } from './transport-hooks.js';

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

/** stdio for both protocol versions; the SDK pins one server instance per connection. */
export function serveOverStdio(host: StdioHost, options: StdioOptions, hooks: TransportHooks): StdioHandle {
  const instances = new Set<SdkServer>();
  const transport = options.stdin || options.stdout ? new StdioServerTransport(options.stdin, options.stdout) : undefined;
  const handle = serveStdio(
    () => {
      const sdk = host.createSdkServer('stdio');
      instances.add(sdk);
      return sdk;
    },
    {
      legacy: 'serve',
      ...(transport ? { transport } : {}),
      onerror: (error) => host.logger.debug({ event: 'stdio.error', err: error }, 'stdio transport error'),
    },
  );
  const detachNotify = hooks.onListChanged(() => {
    for (const sdk of instances) void sdk.sendToolListChanged().catch(() => {});
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
