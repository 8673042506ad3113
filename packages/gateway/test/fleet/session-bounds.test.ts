// 2025-11-25 session bounds over a fleet without sticky sessions: `listen.http.maxSessions` holds for
// the three replicas together, as it does for one, however round-robin spreads the sessions; so does each
// caller's share of it, and an evicted session's resource subscriptions end on every replica.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fleetAvailable, fleetClient, servedEverywhere, startFleet, textOf, until } from './harness.js';
import type { Fleet, FleetClient, Replica } from './harness.js';

const MAX_SESSIONS = 4;

/** The session ids whose records the store holds. */
async function recordsOf(fleet: Fleet): Promise<Set<string>> {
  const keys = await fleet.redis.client.keys(`${fleet.keyPrefix}kv:mcp-session:*`);
  return new Set(keys.map((key) => key.slice(key.lastIndexOf(':') + 1)));
}

const transportOf = (client: FleetClient) => client.client.transport as StreamableHTTPClientTransport;

const refused = (client: FleetClient) =>
  client.call('up_whoami').then(
    () => false,
    () => true,
  );

describe.skipIf(!fleetAvailable())('a fleet bounds 2025-11-25 sessions as one replica does', () => {
  let fleet: Fleet;
  const clients: FleetClient[] = [];

  beforeAll(async () => {
    fleet = await startFleet({ maxSessions: MAX_SESSIONS });
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await fleet.close();
  }, 30_000);

  const records = () => recordsOf(fleet);
  const counted = () => fleet.redis.client.zcard(`${fleet.keyPrefix}sessions:{index}:used`);
  /** Opens sessions (at most `bound`) until `client`'s is evicted: newer ones make it the least recently used. */
  const pushOut = async (client: FleetClient, bound: number) => {
    const id = transportOf(client).sessionId!;
    for (let i = 0; (await records()).has(id) && i < bound; i++) {
      const newer = await fleetClient(fleet.lb.url, '2025-11-25');
      clients.push(newer);
      await newer.call('up_whoami');
    }
    expect((await records()).has(id)).toBe(false);
  };

  it('keeps at most maxSessions over the three replicas, evicting the least recently used on all of them', async () => {
    for (let i = 0; i < MAX_SESSIONS + 2; i++) {
      const client = await fleetClient(fleet.lb.url, '2025-11-25');
      clients.push(client);
      expect(textOf(await client.call('up_whoami'))).toMatch(/^[abc]$/);
    }
    // Round-robin opened them on every replica: each replica alone stays well within the bound.
    const openedOn = clients.map((c) => c.requests.find((r) => r.body.includes('"method":"initialize"'))!.replica);
    expect(new Set(openedOn)).toEqual(new Set(['a', 'b', 'c']));
    const ids = clients.map((c) => transportOf(c).sessionId!);
    // The store holds the four most recently used; the two oldest were evicted, record and all.
    expect(await records()).toEqual(new Set(ids.slice(2)));
    expect(await counted()).toBe(MAX_SESSIONS);
    // Evicted everywhere: whichever replica their next request reaches refuses it.
    for (const gone of clients.slice(0, 2)) await until(() => refused(gone), 'an evicted session refused');
    for (const gone of clients.slice(0, 2)) for (let i = 0; i < 3; i++) expect(await refused(gone)).toBe(true);
    // The four others are served on every replica.
    for (const kept of clients.slice(2)) expect(await servedEverywhere(kept)).toEqual(new Set(['a', 'b', 'c']));
    expect(await records()).toEqual(new Set(ids.slice(2)));

    // A session the client ends leaves the store and the count: the next one opens without evicting.
    await transportOf(clients[2]!).terminateSession();
    // The DELETE is answered before the store hears of it: wait for the record and the index entry to go.
    await until(async () => !(await records()).has(ids[2]!), 'the ended session gone from the store');
    await until(async () => (await counted()) === MAX_SESSIONS - 1, 'the ended session gone from the count');
    const next = await fleetClient(fleet.lb.url, '2025-11-25');
    clients.push(next);
    expect(textOf(await next.call('up_whoami'))).toMatch(/^[abc]$/);
    expect(await records()).toEqual(new Set([...ids.slice(3), transportOf(next).sessionId!]));
  }, 60_000);

  it('lets a call of an evicted session that is running on another replica finish, then ends the session', async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    fleet.gate.shut('work');
    const busy = await fleetClient(fleet.lb.url, '2025-11-25');
    clients.push(busy);
    const running = busy.call('up_work', { tag: 'long' });
    await until(() => fleet.gate.held('work').length === 1, 'the call at the gate');
    // (A sweep may touch it while its call runs, which puts it back in the order: open more until it is evicted.)
    await pushOut(busy, 4 * MAX_SESSIONS);
    fleet.gate.release('work');
    expect(textOf(await running)).toMatch(/^long by [abc]$/);
    await until(() => refused(busy), 'the evicted session refused after its call');
  }, 60_000);

  it("unsubscribes every replica's upstream from what an evicted session subscribed to", async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    // Asked of each replica directly, statelessly (2026-07-28): no session of its own to count.
    const held = async (replica: Replica): Promise<string[]> => {
      const direct = await fleetClient(replica.url, '2026-07-28');
      try {
        return JSON.parse(textOf(await direct.call('up_subscribed'))) as string[];
      } finally {
        await direct.close();
      }
    };
    const uri = 'file:///memo/evicted';
    const doomed = await fleetClient(fleet.lb.url, '2025-11-25');
    clients.push(doomed);
    // A copy on every replica, each subscribed.
    expect(await servedEverywhere(doomed)).toEqual(new Set(['a', 'b', 'c']));
    await doomed.client.subscribeResource({ uri });
    for (const replica of fleet.replicas)
      await until(async () => (await held(replica)).includes(uri), `subscribed on ${replica.name}`);
    await pushOut(doomed, 2 * MAX_SESSIONS);
    for (const replica of fleet.replicas)
      await until(async () => !(await held(replica)).includes(uri), `unsubscribed on ${replica.name}`);
  }, 60_000);
});

const KEYS = { agent: 'fleet-agent-key-0123456789abcdef', ops: 'fleet-ops-key-0123456789abcdef' };

describe.skipIf(!fleetAvailable())('a fleet holds each caller to its share of the sessions', () => {
  // The default share: a quarter of maxSessions, two sessions per caller.
  const MAX = 8;
  let fleet: Fleet;
  const clients: FleetClient[] = [];

  beforeAll(async () => {
    fleet = await startFleet({ maxSessions: MAX, keys: KEYS });
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await fleet.close();
  }, 30_000);

  const records = () => recordsOf(fleet);
  const open = async (key: string): Promise<FleetClient> => {
    const client = await fleetClient(fleet.lb.url, '2025-11-25', { key });
    clients.push(client);
    expect(textOf(await client.call('up_whoami'))).toMatch(/^[abc]$/);
    return client;
  };
  const idOf = (client: FleetClient) => transportOf(client).sessionId!;

  it("keeps one key's sessions, opened round-robin until they would fill the table, from taking another's", async () => {
    const theirs = await open(KEYS.ops);
    const hogs: FleetClient[] = [];
    for (let i = 0; i < MAX + 2; i++) hogs.push(await open(KEYS.agent));
    const openedOn = hogs.map((c) => c.requests.find((r) => r.body.includes('"method":"initialize"'))!.replica);
    expect(new Set(openedOn)).toEqual(new Set(['a', 'b', 'c']));
    // The store holds the hog's two most recent sessions and the other caller's: the older ones were the hog's own.
    expect(await records()).toEqual(new Set([idOf(theirs), ...hogs.slice(-2).map(idOf)]));
    expect(await servedEverywhere(theirs)).toEqual(new Set(['a', 'b', 'c']));
    for (const gone of hogs.slice(0, -2)) await until(() => refused(gone), 'an evicted session of the hog refused');
    for (const kept of hogs.slice(-2)) expect(await servedEverywhere(kept)).toEqual(new Set(['a', 'b', 'c']));
    // The other caller opens another session, and keeps the first.
    const second = await open(KEYS.ops);
    expect(await servedEverywhere(second)).toEqual(new Set(['a', 'b', 'c']));
    expect(await servedEverywhere(theirs)).toEqual(new Set(['a', 'b', 'c']));
    expect(await records()).toEqual(new Set([idOf(theirs), idOf(second), ...hogs.slice(-2).map(idOf)]));
  }, 90_000);
});
