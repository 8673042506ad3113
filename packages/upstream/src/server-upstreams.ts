import type { ImportResult, ServerContext } from '@sluice/core';
import { Tokens } from '@sluice/core';
import type { ConsentServing, ListenCaller, ServerUpstreams, UpstreamHost } from '@sluice/core/internal';
import { guardsOf, presentRound } from '@sluice/core/internal';
import type { Server } from '@modelcontextprotocol/server';
import { FeatureCatalog } from './features/catalog.js';
import { admitListen, featureRequests, serveFeatures } from './features/sdk-handlers.js';
import type { UpstreamStatus as OwnUpstreamStatus } from './health.js';
import { ConsentFlows } from './oauth/consent.js';
import type { PerUserContext } from './oauth/per-user.js';
import type { ImportOptions as OwnImportOptions } from './options.js';
import { UpstreamRegistry } from './registry.js';
import { RoundStateSeal } from './round-state.js';

/**
 * The upstreams of one Sluice server: its registry and feature catalog, made
 * on the first `server.import()`, the seal of their input-required rounds,
 * and the consent flows of `per_user` upstreams when the server has a vault.
 */
export class ImportedUpstreams implements ServerUpstreams {
  /** Seals the state of upstream round trips; see `round-state.ts`. */
  readonly roundSeal: RoundStateSeal;
  private registry: UpstreamRegistry | undefined;
  private catalog: FeatureCatalog | undefined;
  private perUserContext: PerUserContext | undefined;

  constructor(private readonly host: UpstreamHost) {
    const secret = host.roundStateSecret;
    this.roundSeal = new RoundStateSeal(secret === undefined ? undefined : Buffer.from(secret, 'utf8'));
  }

  async import(options: OwnImportOptions): Promise<ImportResult> {
    const { host } = this;
    this.catalog ??= new FeatureCatalog(
      (change) => host.notify(change),
      host.logger,
      host.hooks.importFeatures.isUsed() ? (batch) => host.hooks.importFeatures.promise(batch) : undefined,
      guardsOf(host.hooks).access,
    );
    if (!host.container.isRegistered(Tokens.FeatureRequests)) {
      // Plugins (code mode) read and get for a caller through this, as the caller's own requests.
      host.container.register(Tokens.FeatureRequests, {
        useValue: featureRequests({ catalog: this.catalog, logger: host.logger, guards: guardsOf(host.hooks) }),
      });
    }
    this.registry ??= new UpstreamRegistry({
      logger: host.logger,
      services: host.services,
      version: host.version,
      table: host.table,
      features: this.catalog,
      roundSeal: this.roundSeal,
      perUser: this.perUser(),
      isClosed: () => host.isClosed(),
      onClose: (close) => host.onClose(close),
    });
    return this.registry.import(options);
  }

  get features(): FeatureCatalog | undefined {
    return this.catalog;
  }

  list(): readonly OwnUpstreamStatus[] {
    return this.registry?.list() ?? [];
  }

  serveFeatures(sdk: Server, transport: Parameters<ServerUpstreams['serveFeatures']>[1]): void {
    if (this.catalog === undefined) return;
    serveFeatures(sdk, {
      catalog: this.catalog,
      logger: this.host.logger,
      transport,
      guards: guardsOf(this.host.hooks),
      watchConsent: this.watchConsent,
    });
  }

  presentRound(mcp: ServerContext): ServerContext {
    // Until something is imported, no round of ours can be carried.
    return this.registry === undefined ? mcp : presentRound(mcp, (wire) => this.roundSeal.carriedBy(wire));
  }

  admitListen(uris: readonly string[], caller: ListenCaller): Promise<string[]> {
    if (this.catalog === undefined) return Promise.resolve([...uris]);
    const serving = {
      catalog: this.catalog,
      logger: this.host.logger,
      transport: 'http' as const,
      guards: guardsOf(this.host.hooks),
    };
    return admitListen(serving, uris, caller);
  }

  get watchConsent(): ServerUpstreams['watchConsent'] {
    return this.perUser() === undefined ? undefined : this.watchAnswer;
  }

  /** Made once, not per request: every request of a server with a vault asks for it. */
  private readonly watchAnswer = <T>(sdk: Server, answer: Promise<T>): Promise<T> =>
    this.perUserContext === undefined ? answer : this.perUserContext.consent.watch(sdk, answer);

  consent(): Promise<ConsentServing | undefined> {
    return Promise.resolve(this.perUser()?.consent);
  }

  /** The vault and consent flows of `per_user` upstreams, once the server was given a vault. */
  private perUser(): PerUserContext | undefined {
    const vault = this.host.credentialVault;
    if (vault === undefined) return undefined;
    if (this.perUserContext === undefined) {
      const consent = new ConsentFlows(this.host.services.store, this.host.logger);
      this.perUserContext = { vault, store: this.host.services.store, consent };
      this.host.onClose(() => consent.close());
    }
    return this.perUserContext;
  }
}
