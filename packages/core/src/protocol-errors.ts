import { ProtocolError } from '@modelcontextprotocol/server';
import { CoreErrorCode, RpcCode, SluiceError } from './errors.js';

/** Maps a pipeline failure onto the JSON-RPC error a client sees. */
export function toProtocolError(error: unknown): Error {
  if (error instanceof ProtocolError) return error;
  if (SluiceError.is(error)) {
    // An upstream's own JSON-RPC error, relayed as it came (code, message, data).
    if (error.code === CoreErrorCode.UPSTREAM_ERROR && error.cause instanceof ProtocolError) return error.cause;
    // A per_user upstream's URL-mode elicitation (-32042), with the consent link in its data.
    if (error.code === CoreErrorCode.UPSTREAM_CONNECT_REQUIRED && error.cause instanceof ProtocolError)
      return error.cause;
    if (error.rpcCode === RpcCode.INVALID_PARAMS)
      return new ProtocolError(RpcCode.INVALID_PARAMS, error.message, { code: error.code });
    if (error.code === CoreErrorCode.PLUGIN_FAILED && error.plugin !== undefined) {
      // The client learns which plugin failed, not the details: they may hold secrets.
      return new ProtocolError(
        RpcCode.INTERNAL_ERROR,
        `Internal error in plugin "${error.plugin}" (${error.hook ?? 'unknown hook'})`,
        {
          code: error.code,
        },
      );
    }
    return new ProtocolError(error.rpcCode ?? RpcCode.INTERNAL_ERROR, error.message, { code: error.code });
  }
  return new ProtocolError(RpcCode.INTERNAL_ERROR, 'Internal error');
}
