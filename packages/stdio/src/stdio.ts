import type { Server as SdkServer } from '@modelcontextprotocol/server';
import type { StdioHandle, StdioOptions } from '@sluice/core';
import { importServerPackage, importServerStdio, sendChange } from '@sluice/core/internal';
import type { ChangeAudience, StdioHost, TransportHooks } from '@sluice/core/internal';
import { StdioLineTransport } from './stdio-transport.js';

/** Whom a stdio connection serves: the process that started it, no caller the listener verified. */
const STDIO: ChangeAudience = { authInfo: undefined, transport: 'stdio' };

/**
 * stdio for both protocol versions; the SDK pins one server instance per connection. The SDK's server package
 * is loaded as core's server loader loads it: a served server has loaded it already.
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
    for (const sdk of instances) sendChange(sdk, change, STDIO);
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
