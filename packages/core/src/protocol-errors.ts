import { CoreErrorCode, RpcCode, SluiceError } from './errors.js';
import { RpcError, isRpcError } from './rpc-error.js';
import type { RpcErrorLike } from './rpc-error.js';

/**
 * Maps a pipeline failure onto the JSON-RPC error a client sees: a JSON-RPC
 * error (core's or the SDK's) as it is, anything else as core's `RpcError`.
 */
export function toProtocolError(error: unknown): RpcErrorLike {
  if (isRpcError(error)) return error;
  if (SluiceError.is(error)) {
    // An upstream's own JSON-RPC error, relayed as it came (code, message, data).
    if (error.code === CoreErrorCode.UPSTREAM_ERROR && isRpcError(error.cause)) return error.cause;
    // A per_user upstream's URL-mode elicitation (-32042), with the consent link in its data.
    if (error.code === CoreErrorCode.UPSTREAM_CONNECT_REQUIRED && isRpcError(error.cause)) return error.cause;
    if (error.rpcCode === RpcCode.INVALID_PARAMS)
      return new RpcError(RpcCode.INVALID_PARAMS, error.message, { code: error.code });
    if (error.code === CoreErrorCode.PLUGIN_FAILED && error.plugin !== undefined) {
      // The client learns which plugin failed, not the details: they may hold secrets.
      return new RpcError(
        RpcCode.INTERNAL_ERROR,
        `Internal error in plugin "${error.plugin}" (${error.hook ?? 'unknown hook'})`,
        { code: error.code },
      );
    }
    return new RpcError(error.rpcCode ?? RpcCode.INTERNAL_ERROR, error.message, { code: error.code });
  }
  return new RpcError(RpcCode.INTERNAL_ERROR, 'Internal error');
}
