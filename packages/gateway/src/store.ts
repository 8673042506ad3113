import type { Logger, Store } from '@sluice/core';
import { storeFromConfig } from '@sluice/store-redis';
import type { GatewayConfig } from './config-schema.js';

/** The store a config asks for: undefined for `memory` (the server's own), a Redis store otherwise. */
export function storeOf(config: GatewayConfig, logger: Logger): Store | undefined {
  if (config.store === 'memory') return undefined;
  return storeFromConfig(config.store, { logger });
}
