// `sluice serve` with an upstream behind OAuth: the gateway's own client
// credentials come from the environment, tokens come from a real
// authorization server (oidc-provider), and the upstream verifies that each
// one is bound to it.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '@sluice/core';
import type { HttpListener, SluiceServer } from '@sluice/core';
import { call, httpClient, runCli, tempConfig } from './helpers.js';
import '@sluice/http';

interface AuthorizationServer {
  readonly issuer: string;
  close(): Promise<void>;
}

// Core's test authorization server (oidc-provider), loaded at run time: it lies outside this package's sources.
const helper = fileURLToPath(new URL('../../core/test/helpers/authorization-server.ts', import.meta.url));
const { READER, startAuthorizationServer } = (await import(helper)) as {
  READER: { id: string; secret: string };
  startAuthorizationServer: () => Promise<AuthorizationServer>;
};

let as: AuthorizationServer;
let upstream: SluiceServer;
let listener: HttpListener;
beforeAll(async () => {
  as = await startAuthorizationServer();
  upstream = createServer({ name: 'saas', version: '1.0.0' });
  upstream.tool({
    name: 'whoami',
    handler: (_args, ctx) => ({
      content: [{ type: 'text', text: JSON.stringify({ subject: ctx.auth?.subject, aud: ctx.auth?.claims?.aud }) }],
    }),
  });
  listener = await upstream.listen({
    auth: { type: 'oauth', authorizationServers: [as.issuer], jwksRefreshCooldownSec: 0 },
  });
});
afterAll(async () => {
  await upstream.close();
  await as.close();
});

describe('sluice serve with upstreams[].auth', () => {
  it('reaches the upstream with a client-credentials token bound to it, never showing the secret', async () => {
    const config = tempConfig({
      listen: { http: { port: 0 } },
      upstreams: [
        {
          name: 'saas',
          connection: { type: 'http', url: listener.url.href },
          auth: {
            type: 'client_credentials',
            clientId: READER.id,
            clientSecret: '${SAAS_CLIENT_SECRET}',
            issuer: as.issuer,
            scope: 'read',
          },
        },
      ],
    });
    const run = runCli(['serve', '--config', config.file], { SAAS_CLIENT_SECRET: READER.secret });
    try {
      const url = new URL((await run.event('http.listening')).url as string);
      const client = await httpClient(url);
      const result = await call(client, 'whoami');
      expect(result.isError).toBeFalsy();
      const text = (result.content as { text: string }[])[0]!.text;
      expect(JSON.parse(text)).toEqual({ subject: READER.id, aud: listener.url.href });
      await client.close();
      const metrics = await (await fetch(new URL('/metrics', url))).text();
      expect(metrics).not.toContain(READER.secret);
      expect(run.stderr()).not.toContain(READER.secret);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      config.remove();
    }
  });

  it('refuses auth on a stdio upstream when checking the config', async () => {
    const config = tempConfig({
      listen: { http: { port: 0 } },
      upstreams: [
        {
          name: 'local',
          connection: { type: 'stdio', command: 'true' },
          auth: { type: 'client_credentials', clientId: 'a', clientSecret: 'b' },
        },
      ],
    });
    const run = runCli(['check', '--config', config.file]);
    try {
      expect(await run.exited).not.toBe(0);
      expect(run.stderr() + run.stdout()).toMatch(/auth: applies to `http` and `sse` connections only/);
    } finally {
      config.remove();
    }
  });
});
