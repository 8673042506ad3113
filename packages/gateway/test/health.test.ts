import { describe, expect, it } from 'vitest';
import type { UpstreamStatus } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { createGateway, readiness } from '@sluice/gateway';
import { call, eventually, fixtureUpstream, httpClient } from './helpers.js';

const KEY = 'health-test-key-0123456789';

function upstream(name: string, health: UpstreamStatus['health']): UpstreamStatus {
  return {
    name,
    transport: 'stdio',
    target: 'node',
    health,
    since: 0,
    lastError: undefined,
    tools: [],
    nextRetryAt: undefined,
  };
}

/** An upstream whose child exits at once: it is down from the start. */
const broken = {
  name: 'broken',
  connection: { type: 'stdio' as const, command: process.execPath, args: ['-e', 'process.exit(1)'] },
  retry: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
};

describe('readiness', () => {
  const up = [upstream('a', 'healthy'), upstream('b', 'down')];

  it('is ready once listening with at least one upstream up, or none configured', () => {
    expect(readiness({ draining: false, listening: true, upstreams: up }, 'anyUpstream')).toMatchObject({
      ready: true,
      upstreams: { up: 1, total: 2 },
    });
    expect(readiness({ draining: false, listening: true, upstreams: [] }, 'anyUpstream').ready).toBe(true);
  });

  it('is not ready before listening, while draining, or when every upstream is down', () => {
    expect(readiness({ draining: false, listening: false, upstreams: up }, 'listening').reason).toBe('starting');
    expect(readiness({ draining: true, listening: true, upstreams: up }, 'listening').reason).toBe('draining');
    const down = [upstream('a', 'down'), upstream('b', 'connecting')];
    expect(readiness({ draining: false, listening: true, upstreams: down }, 'anyUpstream')).toMatchObject({
      ready: false,
      reason: 'every upstream is down',
    });
  });

  it('follows the configured rule: all upstreams, or listening alone', () => {
    expect(readiness({ draining: false, listening: true, upstreams: up }, 'allUpstreams').ready).toBe(false);
    const down = [upstream('a', 'down')];
    expect(readiness({ draining: false, listening: true, upstreams: down }, 'listening').ready).toBe(true);
  });
});

describe('the health endpoints', () => {
  it('answer without credentials on an authenticated listener, and name no upstream', async () => {
    const gateway = createGateway(
      {
        listen: { http: { port: 0, auth: { type: 'apiKeys', keys: [{ name: 'ops', key: KEY }] } } },
        upstreams: [fixtureUpstream('shop')],
      },
      { logger: captureLogger().logger },
    );
    try {
      const { http } = await gateway.start();
      const base = http?.url as URL;
      const live = await fetch(new URL('/healthz', base));
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
      const ready = await fetch(new URL('/readyz', base));
      expect(ready.status).toBe(200);
      const body = await ready.text();
      expect(JSON.parse(body)).toEqual({ ready: true, reason: 'ready', upstreams: { up: 1, total: 1 } });
      expect(body).not.toContain('shop');
      // The metrics beside them still need a key.
      expect((await fetch(new URL('/metrics', base))).status).toBe(401);
      expect((await fetch(new URL('/readyz', base), { method: 'POST' })).status).toBe(405);
    } finally {
      await gateway.close();
    }
  });

  it('/readyz answers 503 when every upstream is down', async () => {
    const gateway = createGateway(
      { listen: { http: { port: 0 } }, upstreams: [broken] },
      { logger: captureLogger().logger },
    );
    try {
      const { http } = await gateway.start();
      const ready = await fetch(new URL('/readyz', http?.url));
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({
        ready: false,
        reason: 'every upstream is down',
        upstreams: { up: 0, total: 1 },
      });
      expect((await fetch(new URL('/healthz', http?.url))).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  it('/readyz answers 503 while the gateway drains running calls', async () => {
    const gateway = createGateway(
      { listen: { http: { port: 0 } }, upstreams: [fixtureUpstream('shop')], drainTimeoutMs: 1_000 },
      { logger: captureLogger().logger },
    );
    const { http } = await gateway.start();
    const url = http?.url as URL;
    const client = await httpClient(url);
    const held = call(client, 'shop_hold').catch(() => undefined);
    await eventually(async () => textOf(await gateway.server.call('shop_held')) === '1', 'the call to be held');
    const closing = gateway.close();
    const ready = await fetch(new URL('/readyz', url));
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, reason: 'draining' });
    await closing;
    await held;
    await client.close().catch(() => {});
  });
});
