import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';
import { call, eventually, fixtureUpstream, httpClient } from './helpers.js';

let redis: RedisProcess;
const replicas: Gateway[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const gateway of replicas) await gateway.close();
  await redis.stop();
});

/** A gateway replica on the shared Redis: one call of up_hold at a time across all replicas, none waiting. */
async function replica(): Promise<URL> {
  const gateway = createGateway(
    {
      listen: { http: { port: 0 } },
      upstreams: [fixtureUpstream('up')],
      plugins: { concurrency: { tools: { up_hold: { maxActive: 1, maxQueue: 0 } } } },
      store: { redis: redis.url, keyPrefix: 'gateway-test:' },
    },
    { logger: captureLogger().logger },
  );
  replicas.push(gateway);
  const { http } = await gateway.start();
  return http!.url;
}

describe('store: { redis }', () => {
  it('puts the limits in Redis, so two replicas enforce one limit', async () => {
    const [first, second] = [await httpClient(await replica()), await httpClient(await replica())];
    const held = call(first, 'up_hold');
    await eventually(async () => textOf(await call(first, 'up_held')) === '1', 'the first call to hold the only slot');
    const shed = await call(second, 'up_hold');
    expect(errorOf(shed)?.code).toBe('SERVER_BUSY');
    expect(textOf(await call(first, 'up_release'))).toBe('released 1');
    expect(textOf(await held)).toBe('released');
    await first.close();
    await second.close();
  });
});
