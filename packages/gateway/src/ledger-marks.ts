import { resolve } from 'node:path';
import type { Logger, SluiceTool, Store } from '@sluice/core';
import { FingerprintLedger, JsonFileStore, fingerprint } from '@sluice/plugin-risk';
import type { LedgerEntry, LedgerStore } from '@sluice/plugin-risk';
import { storeFromConfig } from '@sluice/store-redis';
import type { GatewayConfig } from './config-schema.js';

/** How the ledger would treat an exposed tool: calls held for re-review, or revoked. */
export type LedgerMark = 'held' | 'revoked';

/**
 * Reads the config's risk ledger (its file, or the Redis store) without
 * writing to it, and says which of the tools would be held: revoked ones,
 * and ones whose definition no longer matches the approved fingerprint.
 * No ledger configured, or none written yet: no marks.
 */
export async function ledgerMarks(
  config: GatewayConfig,
  tools: readonly SluiceTool[],
  logger: Logger,
): Promise<Map<string, LedgerMark>> {
  const marks = new Map<string, LedgerMark>();
  const opened = openLedgerStore(config, logger);
  if (opened === undefined) return marks;
  try {
    const ledger = new FingerprintLedger(opened.store);
    const entries = new Map<string, Map<string, LedgerEntry>>();
    for (const tool of tools) {
      if (tool.source.kind !== 'upstream') continue;
      const { upstream, originalName } = tool.source;
      let known = entries.get(upstream);
      if (known === undefined) {
        known = new Map((await ledger.entries(upstream)).map((e) => [e.name, e]));
        entries.set(upstream, known);
      }
      const entry = known.get(originalName);
      if (entry === undefined) continue;
      if (entry.lifecycle === 'REVOKED') marks.set(tool.name, 'revoked');
      else if (fingerprint({ ...tool.definition, name: originalName }) !== entry.approved) marks.set(tool.name, 'held');
    }
    return marks;
  } finally {
    await opened.close();
  }
}

function openLedgerStore(
  config: GatewayConfig,
  logger: Logger,
): { store: LedgerStore; close(): Promise<void> } | undefined {
  const risk = config.plugins.risk;
  if (risk === undefined || risk.mode === 'off') return undefined;
  const persist = risk.ledger.persist;
  if (persist === 'memory') return undefined;
  const shared = config.store !== 'memory';
  if (persist === 'file' || (persist === 'auto' && !shared))
    return { store: new JsonFileStore(resolve(risk.ledger.path)), close: () => Promise.resolve() };
  if (config.store === 'memory') return undefined;
  const store: Store = storeFromConfig(config.store, { logger });
  return { store, close: () => store.close() };
}
