// A v1 server with one guard adopted, and the program's own tsyringe: tsyringe and the reflect-metadata
// polyfill have not loaded until the program asks for the server's container (under Node; a single file
// carries them), and a class the program marks @injectable() resolves there with a core service injected (the
// same copy of tsyringe as core's). Prints "ok" when all of that held.
import { createRequire } from 'node:module';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { adopt, Tokens } from '@sluice/core';
import { concurrency } from '@sluice/plugin-concurrency';

// No top-level await: the same source also bundles as CommonJS.
async function main() {
  const server = new McpServer({ name: 'weather', version: '1.0.0' });
  const sluice = adopt(server, [concurrency({ tools: { forecast: { maxActive: 1 } } })]);
  const cache = typeof require === 'function' ? require.cache : createRequire(import.meta.url).cache;
  const before = Object.keys(cache).filter((path) => /[\\/](tsyringe|reflect-metadata)[\\/]/.test(path));
  await import('reflect-metadata');
  const { inject, injectable } = await import('tsyringe');
  class Forecasts {
    constructor(store) {
      this.store = store;
    }
  }
  inject(Tokens.Store)(Forecasts, undefined, 0);
  injectable()(Forecasts);
  const resolved = sluice.container.resolve(Forecasts);
  await sluice.close();
  if (before.length === 0 && resolved.store === sluice.services.store) console.log('ok');
  else console.log('unexpected', JSON.stringify({ before, injected: resolved.store === sluice.services.store }));
}
void main();
