// createServer() in a project that adopts guards only: it has @sluice/core, not the MCP SDK's v2 server package
// (an optional peer of core). Building a server works; serving it fails with an error that names the package to
// install. Prints "ok" when it did.
import { createServer } from '@sluice/core';

const server = createServer({ name: 'full', version: '1.0.0' });
try {
  await server.ready();
  console.log('unexpected: ready() resolved without @modelcontextprotocol/server installed');
} catch (error) {
  const named = String(error?.message).includes('npm install @modelcontextprotocol/server');
  console.log(named && error?.code === 'INVALID_STATE' ? 'ok' : `unexpected: ${error?.code} ${error?.message}`);
} finally {
  await server.close();
}
