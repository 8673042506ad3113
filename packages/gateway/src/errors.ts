import { SluiceError } from '@sluice/core';

/** Every code the gateway raises. */
export const GatewayErrorCode = Object.freeze({
  /** The config file cannot be read. */
  CONFIG_NOT_FOUND: 'CONFIG_NOT_FOUND',
  /** The config file is not JSON. */
  CONFIG_NOT_JSON: 'CONFIG_NOT_JSON',
  /** The config fails its schema; the message names each bad field by path. */
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** A `${VAR}` in the config names an environment variable that is not set. */
  ENV_MISSING: 'ENV_MISSING',
  /** The command line is malformed. */
  USAGE: 'USAGE',
  /** `sluice serve` could not start (the port is taken, say). */
  START_FAILED: 'START_FAILED',
  /** The admin API was asked about a tool the ledger does not hold. */
  UNKNOWN_LEDGER_TOOL: 'UNKNOWN_LEDGER_TOOL',
  /** The admin API or `sluice ledger` needs `plugins.risk`, whose ledger it reads. */
  NO_LEDGER: 'NO_LEDGER',
  /** The admin API or `sluice credentials` needs `credentialVault`, whose grants it lists and revokes. */
  NO_VAULT: 'NO_VAULT',
  /** `sluice ledger` could not reach the gateway's admin API, or it refused the request. */
  ADMIN_UNAVAILABLE: 'ADMIN_UNAVAILABLE',
} as const);

export type GatewayErrorCode = (typeof GatewayErrorCode)[keyof typeof GatewayErrorCode];

/** A problem with the config: the CLI prints its message (no stack) and exits with 2. */
export function configError(code: GatewayErrorCode, message: string, cause?: unknown): SluiceError {
  return new SluiceError(code, message, cause === undefined ? {} : { cause });
}

const CONFIG_CODES: ReadonlySet<string> = new Set<string>([
  GatewayErrorCode.CONFIG_NOT_FOUND,
  GatewayErrorCode.CONFIG_NOT_JSON,
  GatewayErrorCode.CONFIG_INVALID,
  GatewayErrorCode.ENV_MISSING,
  GatewayErrorCode.USAGE,
  // A plugin or store factory that rejects options the config schema let through.
  'INVALID_OPTIONS',
]);

/** Whether an error is the user's to fix in the config or the command line (exit code 2). */
export function isConfigError(error: unknown): error is SluiceError {
  return SluiceError.is(error) && CONFIG_CODES.has(error.code);
}
