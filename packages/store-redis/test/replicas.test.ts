import { errorOf, textOf } from '@sluice/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from './helpers/redis-server.js';
import { answerOf, startReplica } from './helpers/replicas.js';
import type { Replica } from './helpers/replicas.js';
import { eventually, uniquePrefix } from './helpers/stores.js';

/**
 * Sluice replicas as separate processes sharing one Redis: the guarantees of
 * one process must hold across all of them.
 */

// Started while the file loads: if Redis cannot start, the whole file fails, saying why.
const redis = await startRedis();
const look = redis.client();
const prefix = uniquePrefix();
let trio: Replica[] = [];

beforeAll(async () => {
  trio = await Promise.all(['a', 'b', 'c'].map((name) => startReplica({ name, redisUrl: redis.url, prefix })));
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(trio.map((replica) => replica.stop()));
  await redis.close();
});

interface WorkAnswer {
  replica: string;
  fence: number;
  admittedAt: number;
}

async function maxRecorded(key: string): Promise<number> {
  return Number(await look.get(`${prefix}test:max:${key}`));
}

async function openGate(name: string): Promise<void> {
  await look.set(`${prefix}gate:${name}`, '1');
  await look.publish(`${prefix}gate:${name}`, 'open');
}

async function runSpread(replicas: readonly Replica[], key: string, calls: number): Promise<void> {
  const results = await Promise.all(
    Array.from({ length: calls }, (_, i) =>
      replicas[i % replicas.length]!.call('work', { key, maxActive: 5, maxQueue: calls, holdMs: 1 + (i % 7) }),
    ),
  );
  const answers = results.map((result) => answerOf(result) as WorkAnswer);
  // The limit holds while holders renew in time; a renewal missed under load would show here first.
  expect(replicas.filter((replica) => replica.stderr().includes('store.redis.lease_lost'))).toEqual([]);
  expect(new Set(answers.map((answer) => answer.replica))).toEqual(new Set(replicas.map((replica) => replica.name)));
  expect(new Set(answers.map((answer) => answer.fence)).size).toBe(calls);
}

describe('replicas sharing one Redis', () => {
  it('never run more than 5 calls at once cluster-wide: 300 simultaneous calls over two replicas', async () => {
    await runSpread(trio.slice(0, 2), 'two', 300);
    expect(await maxRecorded('two')).toBe(5);
    expect(await look.zcard(`${prefix}sem:{two}:leases`)).toBe(0);
  });

  it('never run more than 5 calls at once cluster-wide: 300 simultaneous calls over three replicas', async () => {
    await runSpread(trio, 'three', 300);
    expect(await maxRecorded('three')).toBe(5);
    expect(await look.zcard(`${prefix}sem:{three}:queue`)).toBe(0);
  });

  it('queue and shed as one process would: of 40 calls, 5 run, 20 wait and 15 are shed with SERVER_BUSY', async () => {
    const calls = Array.from({ length: 40 }, (_, i) =>
      trio[i % 3]!.call('work', { key: 'shed', maxActive: 5, maxQueue: 20, gate: 'shed' }),
    );
    const settled: (boolean | undefined)[] = Array.from({ length: 40 });
    calls.forEach((call, i) => void call.then((result) => (settled[i] = result.isError === true)));
    await eventually('15 calls are shed', () => settled.filter((shed) => shed === true).length === 15);
    expect(await look.zcard(`${prefix}sem:{shed}:leases`)).toBe(5);
    expect(await look.zcard(`${prefix}sem:{shed}:queue`)).toBe(20);
    await openGate('shed');
    const results = await Promise.all(calls);
    const shed = results.filter((result) => result.isError);
    expect(shed).toHaveLength(15);
    for (const result of shed) expect(errorOf(result)).toMatchObject({ code: 'SERVER_BUSY', active: 5, queued: 20 });
    expect(results.filter((result) => !result.isError)).toHaveLength(25);
    expect(await maxRecorded('shed')).toBe(5);
  });

  it('free the leases of a SIGKILLed replica after their TTL, and not before', async () => {
    const victim = await startReplica({ name: 'victim', redisUrl: redis.url, prefix });
    const work = { key: 'kill', maxActive: 5, maxQueue: 10, leaseMs: 600, gate: 'never' };
    const held = Array.from({ length: 5 }, () => victim.call('work', work).catch(() => undefined));
    await eventually('the victim holds 5 leases', async () => (await look.zcard(`${prefix}sem:{kill}:leases`)) === 5);
    victim.child.kill('SIGKILL');
    await victim.exited;
    await Promise.all(held);
    // The victim's calls died with it: they no longer run, whatever its leases say.
    await look.mset(`${prefix}test:running:kill`, 0, `${prefix}test:max:kill`, 0);
    const expiries = (await look.zrange(`${prefix}sem:{kill}:leases`, 0, -1, 'WITHSCORES'))
      .filter((_, i) => i % 2 === 1)
      .map(Number);
    expect(expiries).toHaveLength(5);
    const survivor = trio[0]!;
    // The survivor's five calls hold until all five run at once, so the recorded maximum does not hang on timing.
    const calls = Promise.all(
      Array.from({ length: 5 }, () =>
        survivor.call('work', { ...work, gate: 'kill-survivors' }).then((result) => answerOf(result) as WorkAnswer),
      ),
    );
    await eventually(
      'the survivor runs 5 calls',
      async () => Number(await look.get(`${prefix}test:running:kill`)) === 5,
    );
    await openGate('kill-survivors');
    const answers = await calls;
    const earliest = Math.min(...expiries);
    for (const answer of answers) expect(answer.admittedAt).toBeGreaterThanOrEqual(earliest);
    expect(await maxRecorded('kill')).toBe(5);
  });

  it('reject by fencing token the stale write of a lock holder paused past its lease (SIGSTOP/SIGCONT)', async () => {
    const paused = await startReplica({ name: 'paused', redisUrl: redis.url, prefix, leaseMs: 400 });
    try {
      const first = paused.call('fenced_write', { value: 'from the paused holder', gate: 'paused' });
      await eventually(
        'the holder has the lock',
        async () => (await look.get(`${prefix}test:holding`))?.startsWith('paused:') === true,
      );
      paused.child.kill('SIGSTOP');
      const second = answerOf(await trio[1]!.call('fenced_write', { value: 'from the next holder' })) as {
        fence: number;
        accepted: boolean;
      };
      expect(second.accepted).toBe(true);
      paused.child.kill('SIGCONT');
      await openGate('paused');
      const stale = answerOf(await first) as { fence: number; accepted: boolean };
      expect(stale.fence).toBeLessThan(second.fence);
      expect(stale.accepted).toBe(false);
      expect(await look.get(`${prefix}test:resource`)).toBe('from the next holder');
      await eventually('the paused holder learns its lease was lost', () =>
        paused.stderr().includes('store.redis.lease_lost'),
      );
    } finally {
      paused.child.kill('SIGCONT');
      await paused.stop();
    }
  });

  it('accept a single-use nonce once, on whichever replica claims it first', async () => {
    const claims = await Promise.all(
      Array.from({ length: 30 }, (_, i) => trio[i % 3]!.call('claim_nonce', { nonce: 'approval-1' })),
    );
    const won = claims.map((result) => (answerOf(result) as { won: boolean }).won);
    expect(won.filter(Boolean)).toHaveLength(1);
    expect((answerOf(await trio[2]!.call('claim_nonce', { nonce: 'approval-1' })) as { won: boolean }).won).toBe(false);
  });

  it('see on one replica the value another replica set', async () => {
    await trio[0]!.call('put', { key: 'ledger', value: { search: 'sha256:01', reReview: true } });
    for (const replica of trio.slice(1)) {
      expect((answerOf(await replica.call('read', { key: 'ledger' })) as { value: unknown }).value).toEqual({
        search: 'sha256:01',
        reReview: true,
      });
    }
  });

  it('survive a Redis restart: clear errors while it is down under failClosed, service again after', async () => {
    const work = { key: 'restart', maxActive: 2, maxQueue: 10 };
    for (const replica of trio) answerOf(await replica.call('work', work));
    await redis.stop();
    for (const replica of trio) {
      let result = await replica.call('work', work);
      // A replica may not have noticed the loss yet; its next call fails either way.
      if (!result.isError) result = await replica.call('work', work);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('The shared store is unavailable');
      expect(textOf(result)).not.toMatch(/127\.0\.0\.1:\d+/);
    }
    await redis.start();
    for (const replica of trio) {
      await eventually(`replica ${replica.name} serves again`, async () => !(await replica.call('work', work)).isError);
      expect(replica.child.exitCode).toBeNull();
      expect(replica.stderr()).toContain('store.redis.lost');
    }
  });
});
