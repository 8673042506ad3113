// The concurrency plugin's limit and intent mutex across three `sluice serve` replicas behind HAProxy,
// sharing one redis-server: one limit for the whole fleet, one line, one turn per action.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@sluice/core';
import { fleetAvailable, fleetClient, refusalCode, semaphoreKey, startFleet, textOf, until } from './harness.js';
import type { Fleet, FleetClient } from './harness.js';

const SLOTS = 'sluice/concurrency/slots/up_work';

describe.skipIf(!fleetAvailable())('a fleet of three replicas behind HAProxy: limits', () => {
  let fleet: Fleet;
  const clients: FleetClient[] = [];

  beforeAll(async () => {
    fleet = await startFleet({ work: { maxActive: 5, maxQueue: 20 } });
  }, 60_000);

  // A test that failed half-way leaves no call held for the next one.
  afterEach(() => {
    fleet.gate.open('work');
    fleet.gate.open('refund');
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await (fleet as Fleet | undefined)?.close();
  }, 30_000);

  async function connect(count: number): Promise<FleetClient[]> {
    const made: FleetClient[] = [];
    // In batches: the clients connect before the test, the calls are what runs at once.
    while (made.length < count) {
      const batch = Math.min(50, count - made.length);
      made.push(...(await Promise.all(Array.from({ length: batch }, () => fleetClient(fleet.lb.url, '2026-07-28')))));
    }
    clients.push(...made);
    return made;
  }

  const queued = (key: string): Promise<number> =>
    fleet.redis.client.zcard(semaphoreKey(fleet.keyPrefix, key, 'queue'));

  it('runs at most 5 calls in the whole fleet under 500 concurrent clients, queues 20 and sheds exactly the other 475', async () => {
    const { gate } = fleet;
    gate.shut('work');
    const many = await connect(500);
    const answers: CallToolResult[] = [];
    const failures: unknown[] = [];
    const calls = many.map((client, i) =>
      client.call('up_work', { tag: `c${i}` }).then(
        (result) => void answers.push(result),
        (error: unknown) => void failures.push(error),
      ),
    );
    await until(() => answers.length + failures.length >= 475, '475 calls answered while 25 are held', 90_000);
    await until(async () => (await queued(SLOTS)) === 20, '20 calls waiting in Redis');
    await until(() => gate.held('work').length === 5, 'the five admitted calls inside the tool');
    expect(failures).toEqual([]);
    expect(answers.map(refusalCode)).toEqual(Array(475).fill('SERVER_BUSY'));
    // The refusal speaks of the fleet's counts, whichever replica wrote it.
    expect(textOf(answers[0]!)).toContain('5 running, 20 waiting');

    gate.open('work');
    await Promise.all(calls);
    expect(failures).toEqual([]);
    expect(answers).toHaveLength(500);
    const done = answers.filter((a) => !a.isError);
    expect(done).toHaveLength(25);
    expect(gate.peakOf('work')).toBe(5);
    // The calls were spread over every replica (which of them won the 25 places is a race).
    const servedBy = new Set(many.flatMap((c) => c.servedBy));
    expect([...servedBy].sort()).toEqual(['a', 'b', 'c']);
    await Promise.all(many.map((c) => c.close()));
  }, 180_000);

  it('admits the waiting calls in the order they queued, whichever replica each waits on', async () => {
    const { gate } = fleet;
    gate.shut('work');
    gate.resetPeak('work');
    const [client] = await connect(1);
    const results = new Map<string, Promise<CallToolResult>>();
    for (let i = 0; i < 5; i++) results.set(`h${i}`, client!.call('up_work', { tag: `h${i}` }));
    await until(() => gate.held('work').length === 5, 'five calls holding the slots');
    // One at a time, so that the order they enter the line is known.
    for (let i = 0; i < 20; i++) {
      results.set(`q${i}`, client!.call('up_work', { tag: `q${i}` }));
      await until(async () => (await queued(SLOTS)) === i + 1, `q${i} in the line`);
    }
    const before = gate.arrivals.length;
    // Free one slot at a time: each must go to the head of the line.
    for (let i = 0; i < 20; i++) {
      gate.release('work', 1);
      await until(() => gate.arrivals.length === before + i + 1, `the call after release ${i + 1} to start`);
    }
    const order = gate.arrivals.slice(before).map((a) => a.tag);
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => `q${i}`));
    gate.open('work');
    const texts = await Promise.all([...results.values()].map(async (r) => textOf(await r)));
    // The line held calls waiting on every replica.
    const waitedOn = new Set(texts.filter((t) => t.startsWith('q')).map((t) => t.slice(-1)));
    expect([...waitedOn].sort()).toEqual(['a', 'b', 'c']);
    expect(gate.peakOf('work')).toBe(5);
  }, 120_000);

  it('runs identical destructive calls landing on different replicas one at a time, and others alongside', async () => {
    const { gate } = fleet;
    gate.shut('refund');
    const same = 'sluice/concurrency/lock/up_refund/5:inv-7';
    const three = await connect(4);
    const results = three
      .slice(0, 3)
      .map((client, i) => client.call('up_refund', { invoiceId: 'inv-7', tag: `r${i}` }));
    await until(
      async () => gate.held('refund').length === 1 && (await queued(same)) === 2,
      'one refund running, two in line',
    );
    // Another invoice is another action: it runs while inv-7's line waits.
    const other = three[3]!.call('up_refund', { invoiceId: 'inv-8', tag: 'x' });
    await until(() => gate.held('refund').length === 2, 'the refund of inv-8 running alongside');
    gate.release('refund', 1); // inv-7, first turn (the oldest held)
    for (let turn = 1; turn < 3; turn++) {
      await until(
        () => gate.held('refund').filter((e) => e.tag.startsWith('inv-7')).length === 1,
        `inv-7's turn ${turn + 1}`,
      );
      expect(gate.held('refund').filter((e) => e.tag.startsWith('inv-7'))).toHaveLength(1);
      gate.release('refund', gate.held('refund').findIndex((e) => e.tag.startsWith('inv-7')) + 1);
    }
    gate.open('refund');
    const texts = (await Promise.all([...results, other])).map(textOf);
    expect(texts.slice(0, 3).every((t) => t.startsWith('refunded inv-7'))).toBe(true);
    const sevens = gate.arrivals.filter((a) => a.tool === 'refund' && a.tag.startsWith('inv-7'));
    expect(sevens).toHaveLength(3);
    expect(new Set(sevens.map((a) => a.replica)).size).toBe(3);
  }, 120_000);
});
