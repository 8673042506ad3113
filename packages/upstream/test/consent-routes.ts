import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConsentFlows } from '../src/oauth/consent.js';

/** Serves the consent routes of `flows` on loopback: returns their origin; the server's close goes to `closing`. */
export async function serveConsentRoutes(flows: ConsentFlows, closing: Array<() => Promise<unknown>>): Promise<string> {
  const routes = flows.routes();
  const server = http.createServer((req, res) => {
    const route = routes[new URL(req.url ?? '/', 'http://localhost').pathname];
    if (route === undefined) res.writeHead(404).end();
    else route(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
