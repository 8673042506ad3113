import { CoreErrorCode, SluiceError } from '@sluice/core';
import { serverClosed } from '@sluice/core/internal';
import type { ImportResult } from '@sluice/core';
import type { UpstreamStatus } from './health.js';
import type { ImportOptions } from './options.js';
import { parseImportOptions } from './options.js';
import type { UpstreamHost } from './upstream-client.js';
import { UpstreamClient } from './upstream-client.js';

/** The host a registry serves, with what it needs to close along with it. */
export interface RegistryHost extends UpstreamHost {
  isClosed(): boolean;
  onClose(close: () => Promise<void>): () => void;
}

/** The upstreams one Sluice server imports, by configured name. */
export class UpstreamRegistry {
  private readonly upstreams = new Map<string, UpstreamClient>();
  private closed = false;

  constructor(private readonly host: RegistryHost) {
    host.onClose(() => this.close());
  }

  /** Validates the options, connects, and admits the upstream's tools; see `SluiceServer.import`. */
  async import(options: ImportOptions): Promise<ImportResult> {
    const resolved = parseImportOptions(options);
    if (this.closed || this.host.isClosed()) throw serverClosed('import');
    if (this.upstreams.has(resolved.name)) {
      throw new SluiceError(
        CoreErrorCode.INVALID_OPTIONS,
        `Invalid import options: name: an upstream named "${resolved.name}" is already imported`,
        {
          hook: 'import',
        },
      );
    }
    const upstream = new UpstreamClient(this.host, resolved);
    this.upstreams.set(resolved.name, upstream);
    return upstream.start();
  }

  list(): UpstreamStatus[] {
    return [...this.upstreams.values()].map((upstream) => upstream.status());
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.upstreams.values()].map((upstream) => upstream.close()));
  }
}
