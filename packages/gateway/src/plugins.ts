import { requestFilter } from '@sluice/upstream';
import type { Plugin } from '@sluice/core';
import type { RequestFilterOptions } from '@sluice/upstream';
import { authz } from '@sluice/plugin-authz';
import { chaining } from '@sluice/plugin-chaining';
import { codeMode } from '@sluice/plugin-code-mode';
import { concurrency } from '@sluice/plugin-concurrency';
import { egress } from '@sluice/plugin-egress';
import { loopGuard } from '@sluice/plugin-loop-guard';
import { risk } from '@sluice/plugin-risk';
import { toolSearch } from '@sluice/plugin-tool-search';
import type { GatewayConfig } from './config-schema.js';
import { withUpstreamFacts, withUpstreamSecrets } from './risk-servers.js';

/**
 * The guard plugins a config asks for, each built by its own factory from
 * its own options. The order is documentation only: stages order the taps.
 */
export function pluginsFromConfig(config: GatewayConfig): Plugin[] {
  const { plugins } = config;
  const list: Plugin[] = [];
  if (plugins.authz) list.push(authz(plugins.authz));
  if (plugins.loopGuard) list.push(loopGuard(plugins.loopGuard));
  const filter = requestFilterOptions(config);
  if (filter) list.push(requestFilter(filter));
  if (plugins.risk)
    list.push(risk(withUpstreamSecrets(withUpstreamFacts(plugins.risk, config.upstreams), config.upstreams)));
  if (plugins.concurrency) list.push(concurrency(plugins.concurrency));
  if (plugins.egress) list.push(egress(plugins.egress));
  if (plugins.chaining) list.push(chaining(plugins.chaining));
  if (plugins.codeMode) list.push(codeMode(withJournalSecret(plugins.codeMode, config.roundStateSecret)));
  if (plugins.toolSearch) list.push(toolSearch(plugins.toolSearch));
  return list;
}

/**
 * Code mode seals a paused script's state like the gateway's other 2026-07-28 state: with `roundStateSecret`
 * unless its own `journal.secret` is set (its MAC is domain-separated), so that every replica can resume it.
 */
function withJournalSecret(
  options: NonNullable<GatewayConfig['plugins']['codeMode']>,
  secret: string | undefined,
): NonNullable<GatewayConfig['plugins']['codeMode']> {
  if (secret === undefined || options.journal.secret !== undefined) return options;
  return { ...options, journal: { ...options.journal, secret } };
}

/** On by default when listening on HTTP (other transports carry no headers); `false` turns it off. */
function requestFilterOptions(config: GatewayConfig): RequestFilterOptions | undefined {
  const configured = config.plugins.requestFilter;
  if (configured === false) return undefined;
  if (configured !== undefined) return configured;
  return config.listen.http ? {} : undefined;
}
