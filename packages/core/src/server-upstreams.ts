import type { DependencyContainer } from 'tsyringe';
import type { Services } from './container.js';
import { Tokens } from './container.js';
import type { FeatureCatalog } from './features/catalog.js';
import type { CoreHooks } from './hooks.js';
import type { Logger } from './logger.js';
import type { CredentialVault } from './store/credential-vault.js';
import type { ImportResult, ToolTable } from './tool-table.js';
import type { ListChange } from './transport-hooks.js';
import type { UpstreamStatus } from './upstream/health.js';
import type { PerUserContext } from './upstream/oauth/per-user.js';
import type { ImportOptions } from './upstream/options.js';
import type { UpstreamRegistry } from './upstream/registry.js';
import type { RoundStateSeal } from './upstream/round-state.js';

/** What the upstream side reads of its server. */
export interface ServerUpstreamsParts {
  readonly logger: Logger;
  readonly services: Services;
  readonly container: DependencyContainer;
  readonly hooks: CoreHooks;
  readonly version: string;
  readonly table: ToolTable;
  readonly roundSeal: RoundStateSeal;
  /** Sealed upstream grants (`per_user`), when the server was given a vault. */
  readonly credentialVault: CredentialVault | undefined;
  isClosed(): boolean;
  onClose(close: () => Promise<void>): () => void;
  notify(change: ListChange): void;
}

/**
 * A server's imported upstreams: their registry, the resources, templates
 * and prompts they offer, and the consent flows of `per_user` upstreams.
 * Each is loaded on first use, so that a server without upstreams never
 * loads the SDK client.
 */
export class ServerUpstreams {
  private registry: UpstreamRegistry | undefined;
  private catalog: FeatureCatalog | undefined;
  private perUserContext: PerUserContext | undefined;

  constructor(private readonly parts: ServerUpstreamsParts) {}

  /** Whether the server was given a vault, so that it can have `per_user` upstreams. */
  get hasVault(): boolean {
    return this.parts.credentialVault !== undefined;
  }

  /** Whether any upstream was imported. */
  get imported(): boolean {
    return this.registry !== undefined;
  }

  /** The resources, templates and prompts of imported upstreams; undefined until the first import. */
  get features(): FeatureCatalog | undefined {
    return this.catalog;
  }

  /** Every imported upstream, with its health. */
  list(): readonly UpstreamStatus[] {
    return this.registry?.list() ?? [];
  }

  async import(options: ImportOptions): Promise<ImportResult> {
    const { logger, hooks, container } = this.parts;
    const [{ UpstreamRegistry }, { FeatureCatalog }] = await Promise.all([
      import('./upstream/registry.js'),
      import('./features/catalog.js'),
    ]);
    this.catalog ??= new FeatureCatalog(
      (change) => this.parts.notify(change),
      logger,
      hooks.importFeatures.isUsed() ? (batch) => hooks.importFeatures.promise(batch) : undefined,
    );
    if (!container.isRegistered(Tokens.FeatureRequests)) {
      // Plugins (code mode) read and get for a caller through this, as the caller's own requests.
      const { featureRequests, guardsOf } = await import('./features/sdk-handlers.js');
      const guards = guardsOf(hooks);
      container.register(Tokens.FeatureRequests, {
        useValue: featureRequests({ catalog: this.catalog, logger, guards }),
      });
    }
    this.registry ??= new UpstreamRegistry({
      logger,
      services: this.parts.services,
      version: this.parts.version,
      table: this.parts.table,
      features: this.catalog,
      roundSeal: this.parts.roundSeal,
      perUser: await this.perUser(),
      isClosed: () => this.parts.isClosed(),
      onClose: (close) => this.parts.onClose(close),
    });
    return this.registry.import(options);
  }

  /** The vault and consent flows of `per_user` upstreams, once a vault is given; loaded on first use. */
  async perUser(): Promise<PerUserContext | undefined> {
    const vault = this.parts.credentialVault;
    if (vault === undefined) return undefined;
    if (this.perUserContext === undefined) {
      const { ConsentFlows } = await import('./upstream/oauth/consent.js');
      const { store } = this.parts.services;
      const consent = new ConsentFlows(store, this.parts.logger);
      this.perUserContext ??= { vault, store, consent };
      if (this.perUserContext.consent === consent) this.parts.onClose(() => consent.close());
    }
    return this.perUserContext;
  }

  /** The consent flows, once loaded: a 2025-11-25 client asked to connect is told when its consent completes. */
  get consent(): PerUserContext['consent'] | undefined {
    return this.perUserContext?.consent;
  }
}
