import type { Headers } from './context.js';
import type { AuthInfo } from './protocol.js';
import type { ImportResult } from './tool-table.js';
import type {
  ConsentServing,
  ImportOptions,
  ImportedFeatures,
  ServerUpstreams,
  UpstreamHost,
  UpstreamStatus,
} from './upstreaming.js';
import { upstreamImporting, upstreamImportingProvided } from './upstreaming.js';

/**
 * A server's imported upstreams: `@sluice/upstream` attaches them on the
 * first `import()`; until then the server has none, and needs no package.
 */
export class ServerImports {
  private attached: ServerUpstreams | undefined;

  constructor(private readonly host: UpstreamHost) {}

  /** Imports an upstream; throws the way to install `@sluice/upstream` when no program import gave it. */
  import(options: ImportOptions): Promise<ImportResult> {
    return this.upstreams().import(options);
  }

  /** The attached upstreams; undefined until the first import. */
  get current(): ServerUpstreams | undefined {
    return this.attached;
  }

  get features(): ImportedFeatures | undefined {
    return this.attached?.features;
  }

  list(): readonly UpstreamStatus[] {
    return this.attached?.list() ?? [];
  }

  admitListen(
    uris: readonly string[],
    caller: { authInfo: AuthInfo | undefined; headers: Headers | undefined; signal: AbortSignal },
  ): Promise<string[]> {
    return this.attached?.admitListen(uris, caller) ?? Promise.resolve([...uris]);
  }

  /**
   * The consent routes a listener serves: only a server with a vault has
   * `per_user` upstreams, whose routes come with the upstream import when it
   * is installed.
   */
  async consent(): Promise<ConsentServing | undefined> {
    if (this.host.credentialVault === undefined || !upstreamImportingProvided()) return undefined;
    return this.upstreams().consent();
  }

  private upstreams(): ServerUpstreams {
    const importing = upstreamImporting();
    this.attached ??= importing.attach(this.host);
    return this.attached;
  }
}
