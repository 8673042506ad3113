import { errorOf } from '@sluice/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from './helpers/redis-server.js';
import { answerOf, startReplica } from './helpers/replicas.js';
import type { Replica } from './helpers/replicas.js';
import { eventually, uniquePrefix } from './helpers/stores.js';

/**
 * @sluice/plugin-concurrency, unchanged, on replicas that share the Redis
 * store: its limits, queue, shedding and intent mutex hold cluster-wide.
 */

// Started while the file loads: if Redis cannot start, the whole file fails, saying why.
const redis = await startRedis();
const look = redis.client();
const prefix = uniquePrefix();
let trio: Replica[] = [];

beforeAll(async () => {
  trio = await Promise.all(
    ['p', 'q', 'r'].map((name) => startReplica({ name, redisUrl: redis.url, prefix, withPlugin: true })),
  );
}, 120_000);

afterAll(async () => {
  for (const replica of trio) replica.child.kill('SIGCONT');
  await Promise.allSettled(trio.map((replica) => replica.stop()));
  await redis.close();
});

async function openGate(name: string): Promise<void> {
  await look.set(`${prefix}gate:${name}`, '1');
  await look.publish(`${prefix}gate:${name}`, 'open');
}

describe('the concurrency plugin on replicas sharing the Redis store', () => {
  it('runs at most maxActive 5 calls at once cluster-wide: 300 simultaneous calls over three replicas', async () => {
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => trio[i % 3]!.call('limited', { holdMs: 1 + (i % 5) })),
    );
    expect(results.filter((result) => result.isError)).toEqual([]);
    // The limit holds while holders renew in time; a renewal missed under load would show here first.
    expect(trio.filter((replica) => replica.stderr().includes('store.redis.lease_lost'))).toEqual([]);
    expect(Number(await look.get(`${prefix}test:max:limited`))).toBe(5);
  });

  it('sheds with SERVER_BUSY as one process would: of 40 calls, 5 run, 20 wait, 15 are shed', async () => {
    const calls = Array.from({ length: 40 }, (_, i) => trio[i % 3]!.call('limited_shed', { gate: 'plugin-shed' }));
    let shed = 0;
    for (const call of calls) void call.then((result) => (shed += result.isError ? 1 : 0));
    await eventually('15 calls are shed', () => shed === 15);
    await openGate('plugin-shed');
    const results = await Promise.all(calls);
    const refused = results.filter((result) => result.isError);
    expect(refused).toHaveLength(15);
    for (const result of refused) expect(errorOf(result)).toMatchObject({ code: 'SERVER_BUSY', active: 5, queued: 20 });
    expect(Number(await look.get(`${prefix}test:max:limited_shed`))).toBe(5);
  });

  it("gives the handler the intent mutex's fencing token, so a holder paused past its lease cannot write", async () => {
    // Its locks live 400 ms unless renewed: a pause of a few hundred ms loses them.
    const paused = await startReplica({ name: 'paused', redisUrl: redis.url, prefix, leaseMs: 400, withPlugin: true });
    trio.push(paused);
    const other = trio[0]!;
    const first = paused.call('destructive_write', { value: 'stale', gate: 'plugin-paused' });
    await eventually(
      'the holder has the lock',
      async () => (await look.get(`${prefix}test:holding`))?.startsWith(`${paused.name}:`) === true,
    );
    paused.child.kill('SIGSTOP');
    const second = answerOf(await other.call('destructive_write', { value: 'fresh' })) as {
      fence: number;
      accepted: boolean;
    };
    expect(second.accepted).toBe(true);
    paused.child.kill('SIGCONT');
    await openGate('plugin-paused');
    const stale = answerOf(await first) as { fence: number; accepted: boolean };
    expect(stale.fence).toBeLessThan(second.fence);
    expect(stale.accepted).toBe(false);
    expect(await look.get(`${prefix}test:resource`)).toBe('fresh');
  });
});
