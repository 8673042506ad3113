// 2025-11-25 session bounds over a fleet without sticky sessions: `listen.http.maxSessions` holds for
// the three replicas together, as it does for one, however round-robin spreads the sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fleetAvailable, fleetClient, startFleet, textOf, until } from './harness.js';
import type { Fleet, FleetClient } from './harness.js';

const MAX_SESSIONS = 4;

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

  /** The session ids whose records the store holds. */
  const records = async (): Promise<Set<string>> => {
    const keys = await fleet.redis.client.keys(`${fleet.keyPrefix}kv:mcp-session:*`);
    return new Set(keys.map((key) => key.slice(key.lastIndexOf(':') + 1)));
  };
  const counted = () => fleet.redis.client.zcard(`${fleet.keyPrefix}sessions:{index}:used`);
  const transportOf = (client: FleetClient) => client.client.transport as StreamableHTTPClientTransport;
  const refused = (client: FleetClient) =>
    client.call('up_whoami').then(
      () => false,
      () => true,
    );

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
    // (Round-robin over every request, the clients' standalone GET streams included: call until each replica
    // has answered one, bounded.)
    for (const kept of clients.slice(2)) {
      const served = new Set<string>();
      for (let i = 0; i < 12 && served.size < 3; i++) served.add(textOf(await kept.call('up_whoami')));
      expect(served).toEqual(new Set(['a', 'b', 'c']));
    }
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
    // Sessions opened after it make it the least recently used (a sweep may touch it while its call runs,
    // which puts it back in the order: open more until it is evicted).
    const id = transportOf(busy).sessionId!;
    for (let i = 0; (await records()).has(id) && i < 4 * MAX_SESSIONS; i++) {
      const client = await fleetClient(fleet.lb.url, '2025-11-25');
      clients.push(client);
      await client.call('up_whoami');
    }
    expect((await records()).has(id)).toBe(false);
    fleet.gate.release('work');
    expect(textOf(await running)).toMatch(/^long by [abc]$/);
    await until(() => refused(busy), 'the evicted session refused after its call');
  }, 60_000);
});
