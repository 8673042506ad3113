import { resolve } from 'node:path';
import { CoreErrorCode, MemoryStore, SluiceError, Stage, definePlugin, parseOptions } from '@sluice/core';
import type { Plugin, PluginApi, Services } from '@sluice/core';
import { RiskEngine } from './assess.js';
import { RiskErrorCode } from './errors.js';
import { Gate } from './gate.js';
import { RiskImporter } from './importer.js';
import { FingerprintLedger } from './ledger.js';
import type { LedgerStore } from './ledger-store.js';
import { JsonFileStore } from './ledger-store.js';
import type { RiskConfig } from './options.js';
import { RiskOptions } from './options.js';

export const RISK_PLUGIN_NAME = 'risk';
export const RISK_PLUGIN_VERSION = '0.1.0';

/** Tokens under which the plugin registers its services in the server's container. */
export const RiskTokens = Object.freeze({
  Ledger: Symbol.for('dev.sluice/risk/Ledger'),
});

/** The risk plugin, with the operator's controls over the fingerprint ledger. */
export interface RiskPlugin extends Plugin {
  /**
   * Accepts the definition an upstream tool has now (by the upstream's
   * configured name and its own tool name): its calls run again.
   */
  approveRereview(serverId: string, toolName: string): Promise<void>;
  /** Refuses calls to the tool until it is approved again. */
  revoke(serverId: string, toolName: string): Promise<void>;
  /** The ledger, once the plugin is applied (at once for `persist: 'file'` or `'memory'`). */
  readonly ledger: FingerprintLedger | undefined;
}

/**
 * Identifies, scores and scans every tool that enters the server before any
 * model can reach it: server and tool risk levels, poisoning signatures, the
 * fingerprint ledger and the shadowing rules.
 */
export function risk(options: RiskOptions = {}): RiskPlugin {
  const config = parseOptions(RISK_PLUGIN_NAME, RiskOptions, options);
  const importers = new Set<RiskImporter>();
  let ledger: FingerprintLedger | undefined = config.ledger.persist === 'file' || config.ledger.persist === 'memory' ? createLedger(config) : undefined;

  const requireLedger = (): FingerprintLedger => {
    if (ledger) return ledger;
    throw new SluiceError(CoreErrorCode.INVALID_STATE, 'The risk ledger exists once the plugin is applied to a server', { plugin: RISK_PLUGIN_NAME });
  };

  return definePlugin({
    name: RISK_PLUGIN_NAME,
    version: RISK_PLUGIN_VERSION,
    mode: config.mode,
    get ledger() {
      return ledger;
    },
    apply(api: PluginApi) {
      ledger ??= createLedger(config, api.services);
      api.services.container.register(RiskTokens.Ledger, { useValue: ledger });
      const gate = new Gate();
      const engine = new RiskEngine(config, () => api.services.clock.now());
      const importer = new RiskImporter(engine, ledger, gate, api.logger, api.mode);
      importers.add(importer);
      api.hooks.import.tapPromise({ name: RISK_PLUGIN_NAME, stage: Stage.RISK }, (batch) => importer.import(batch));
      api.hooks.preCall.tap({ name: RISK_PLUGIN_NAME, stage: Stage.RISK }, (ctx) => gate.refuse(ctx));
      // In audit mode nothing is hidden: the core logs the refusals preCall would have made.
      if (api.mode === 'enforce') api.hooks.listTools.tap({ name: RISK_PLUGIN_NAME, stage: Stage.RISK }, (tools) => gate.filter(tools, (name) => importer.registry.sourceOf(name)));
    },
    async approveRereview(serverId: string, toolName: string) {
      await requireLedger().approveRereview(serverId, toolName);
      for (const importer of importers) importer.applyApproval(serverId, toolName);
    },
    async revoke(serverId: string, toolName: string) {
      await requireLedger().revoke(serverId, toolName);
      for (const importer of importers) importer.applyRevocation(serverId, toolName);
    },
  });
}

function createLedger(config: RiskConfig, services?: Services): FingerprintLedger {
  return new FingerprintLedger(ledgerStore(config, services), services ? () => services.clock.now() : Date.now);
}

function ledgerStore(config: RiskConfig, services: Services | undefined): LedgerStore {
  const file = () => new JsonFileStore(resolve(config.ledger.path));
  switch (config.ledger.persist) {
    case 'file':
      return file();
    case 'memory':
      return new MemoryStore();
    case 'store':
    case 'auto':
      if (!services) throw new SluiceError(RiskErrorCode.LEDGER_UNREADABLE, 'The server store is known only once the plugin is applied', { plugin: RISK_PLUGIN_NAME });
      // A shared store (Redis) is what replicas agree on; the in-memory one would forget approvals on restart.
      return config.ledger.persist === 'store' || services.store.kind !== 'memory' ? services.store : file();
  }
}

