// What a Sluice server needs of the MCP SDK's server package to serve a transport. Loaded with the first server that
// can serve (see server-sdk-loader.ts), not with core: a v1 server adopting one guard never loads it.

export { McpServer, Server } from '@modelcontextprotocol/server';
export { guardsOf, serveFeatures } from './features/sdk-handlers.js';
export { rethrowForClient } from './protocol-errors.js';
export { sendChange } from './transport-hooks.js';
