import type { Plugin } from '@sluice/core';
import { chaining } from '@sluice/plugin-chaining';
import type { ChainingOptions } from '@sluice/plugin-chaining';
import { concurrency } from '@sluice/plugin-concurrency';
import type { ConcurrencyOptions } from '@sluice/plugin-concurrency';
import { egress } from '@sluice/plugin-egress';
import type { EgressOptions } from '@sluice/plugin-egress';
import { loopGuard } from '@sluice/plugin-loop-guard';
import type { LoopGuardOptions } from '@sluice/plugin-loop-guard';
import { risk } from '@sluice/plugin-risk';
import type { RiskOptions } from '@sluice/plugin-risk';

export interface DeploymentOptions {
  /** Where the risk plugin keeps its fingerprint ledger: a JSON file, or `memory` (tests). */
  readonly riskLedger?: 'memory' | { readonly path: string };
  /** The service name the loop guard records in call stacks. */
  readonly service?: string;
}

/** Each plugin's options, by the key a gateway config uses for it. */
export interface PluginSettings {
  readonly loopGuard: LoopGuardOptions;
  readonly concurrency: ConcurrencyOptions;
  readonly egress: EgressOptions;
  readonly risk: RiskOptions;
  readonly chaining: ChainingOptions;
}

/**
 * Every Sluice plugin at settings a production server would run with. The
 * conformance server and the gateway in front of it both use these, so the
 * suite judges the whole pipeline, not a bare core.
 */
export function pluginSettings(options: DeploymentOptions = {}): PluginSettings {
  const ledger = options.riskLedger ?? 'memory';
  return {
    loopGuard: { originService: options.service ?? 'conformance', maxDepth: 8 },
    concurrency: { default: { maxActive: 16, maxQueue: 64 }, retryAfterMs: 500 },
    egress: { maxPayloadBytes: 512 * 1024 },
    risk: {
      policy: 'warn',
      ledger: ledger === 'memory' ? { persist: 'memory' } : { persist: 'file', path: ledger.path },
    },
    chaining: { maxDepth: 5 },
  };
}

export function deploymentPlugins(options: DeploymentOptions = {}): Plugin[] {
  const settings = pluginSettings(options);
  return [
    loopGuard(settings.loopGuard),
    concurrency(settings.concurrency),
    egress(settings.egress),
    risk(settings.risk),
    chaining(settings.chaining),
  ];
}
