import type { Logger, Store } from '@sluice/core';
import { CredentialVault } from '@sluice/upstream';
import type { CredentialVaultOptions } from '@sluice/upstream';
import { storeFromConfig } from '@sluice/store-redis';
import type { GatewayConfig } from './config-schema.js';
import { GatewayErrorCode, configError } from './errors.js';

/** The store a config asks for: undefined for `memory` (the server's own), a Redis store otherwise. */
export function storeOf(config: GatewayConfig, logger: Logger): Store | undefined {
  if (config.store === 'memory') return undefined;
  return storeFromConfig(config.store, { logger });
}

/** The credential vault over the store's sealed records. */
export function vaultOf(store: Store | undefined, options: CredentialVaultOptions): CredentialVault {
  if (store?.credentials === undefined)
    throw configError(GatewayErrorCode.CONFIG_INVALID, 'credentialVault: the configured store keeps no credentials');
  return new CredentialVault(store.credentials, options);
}
