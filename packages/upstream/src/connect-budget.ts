import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { ResolvedImportOptions } from './options.js';

/** A stdio server may be fetched before it starts (`npx -y <package>`): its handshake gets a minute. */
export const STDIO_CONNECT_TIMEOUT_MS = 60_000;
/** A remote server is already running: its handshake gets ten seconds. */
export const REMOTE_CONNECT_TIMEOUT_MS = 10_000;

/** The limit for the handshake and each list, in ms: `connectTimeoutMs`, else the default of the connection's type. */
export function connectBudgetMs(options: ResolvedImportOptions): number {
  return (
    options.connectTimeoutMs ??
    (options.connection.type === 'stdio' ? STDIO_CONNECT_TIMEOUT_MS : REMOTE_CONNECT_TIMEOUT_MS)
  );
}

/**
 * A handshake that ran out of time, said so that an operator knows what to
 * change; any other error as it was.
 */
export function handshakeError(error: unknown, options: ResolvedImportOptions): unknown {
  if (!(error instanceof SdkError) || error.code !== SdkErrorCode.RequestTimeout) return error;
  const budget = connectBudgetMs(options);
  const advice =
    options.connection.type === 'stdio'
      ? `; a server started with "npx -y" may still be downloading its package: raise connectTimeoutMs for this ` +
        `upstream, or install its package beforehand (npm install -g <package>) and name its command`
      : `; raise connectTimeoutMs for this upstream if it is slow to answer`;
  return new Error(`the upstream did not answer its handshake within ${budget} ms (connectTimeoutMs)${advice}`, {
    cause: error,
  });
}
