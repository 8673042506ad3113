// 2025-11-25 sessions and console logins in a fleet of three `sluice serve` replicas behind HAProxy
// with no stick rules: every request goes round-robin, and any replica serves it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fleetAvailable, fleetClient, textOf, until } from './harness.js';
import { startFleet } from './harness.js';
import type { Fleet, FleetClient } from './harness.js';

const KEYS = { agent: 'fleet-agent-key-0123456789abcdef', ops: 'fleet-ops-key-0123456789abcdef' };

describe.skipIf(!fleetAvailable())('a fleet without sticky sessions: 2025-11-25 sessions and console logins', () => {
  let fleet: Fleet;
  const clients: FleetClient[] = [];

  beforeAll(async () => {
    fleet = await startFleet({ keys: KEYS });
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await fleet.close();
  }, 30_000);

  async function session(): Promise<FleetClient> {
    const client = await fleetClient(fleet.lb.url, '2025-11-25', { key: KEYS.agent });
    clients.push(client);
    return client;
  }

  /** The requests of a client whose body matches, with the replica that answered each. */
  const sent = (client: FleetClient, pattern: RegExp) =>
    client.requests.filter((r) => r.method === 'POST' && pattern.test(r.body));

  it("serves a session's consecutive requests on different replicas, all answered, initialized once", async () => {
    const client = await session();
    const answers: string[] = [];
    for (let i = 0; i < 6; i++) answers.push(textOf(await client.call('up_whoami')));
    const calls = sent(client, /"name":"up_whoami"/);
    // The response header says which replica answered: consecutive calls went to different ones.
    for (let i = 1; i < calls.length; i++) expect(calls[i]!.replica).not.toBe(calls[i - 1]!.replica);
    expect(new Set(calls.map((c) => c.replica))).toEqual(new Set(['a', 'b', 'c']));
    expect(new Set(answers)).toEqual(new Set(['a', 'b', 'c']));
    expect(sent(client, /"method":"initialize"/)).toHaveLength(1);
  }, 60_000);

  it('carries an approval asked by elicitation on one replica back from the answer posted through another', async () => {
    const client = await session();
    let asked = 0;
    client.client.setRequestHandler('elicitation/create', async () => {
      asked++;
      return { action: 'accept', content: { approve: true } };
    });
    // The elicitation travels on the session's GET stream: wait until the client holds one.
    await until(() => client.requests.some((r) => r.method === 'GET' && r.replica !== null), 'the GET stream');
    for (let i = 0; i < 3; i++) {
      const result = await client.call('up_deploy', { env: `stage-${i}` });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(textOf(result)).toMatch(new RegExp(`^deployed to stage-${i} by [abc]$`));
    }
    expect(asked).toBe(3);
    const calls = sent(client, /"name":"up_deploy"/);
    const answers = sent(client, /"action":"accept"/);
    expect(answers).toHaveLength(3);
    // Round-robin put each answer on another replica than the call that waited for it.
    expect(answers.some((answer, i) => answer.replica !== calls[i]!.replica)).toBe(true);
  }, 60_000);

  it('cancels a call on the replica that runs it when the cancellation lands on another', async () => {
    const client = await session();
    fleet.gate.shut('wait');
    const abort = new AbortController();
    const call = client.client.callTool({ name: 'up_wait', arguments: { tag: 'cancel-me' } }, { signal: abort.signal });
    await until(() => fleet.gate.inside('wait') === 1, 'the call at the gate');
    abort.abort('the user gave up');
    await expect(call).rejects.toThrow();
    // The upstream's fetch to the gate was aborted: the call was cancelled where it ran.
    await until(() => fleet.gate.inside('wait') === 0, 'the call cancelled upstream');
    const [waited] = sent(client, /"name":"up_wait"/);
    const [cancelled] = sent(client, /notifications\/cancelled/);
    expect(cancelled!.replica).not.toBe(waited!.replica);
  }, 60_000);

  it('tells the client on its GET stream, held by one replica, that the tool list changed', async () => {
    const client = await session();
    let changed = 0;
    client.client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    await until(() => client.requests.some((r) => r.method === 'GET' && r.replica !== null), 'the GET stream');
    // Each replica's upstream grows a tool: every replica sees the change, the stream's holder tells the client.
    for (const replica of fleet.replicas) {
      const direct = new Client({ name: 'grower', version: '1' });
      await direct.connect(
        new StreamableHTTPClientTransport(replica.url, {
          requestInit: { headers: { authorization: `Bearer ${KEYS.agent}` } },
        }),
      );
      await direct.callTool({ name: 'up_grow', arguments: {} });
      await direct.close();
    }
    await until(() => changed > 0, 'tools/list_changed on the GET stream');
    await until(
      async () => (await client.client.listTools()).tools.some((t) => t.name === 'up_extra1'),
      'the new tool listed',
    );
  }, 60_000);

  it('accepts a console login made on one replica on the two others, and ends it everywhere on logout', async () => {
    const [a, b, c] = fleet.replicas;
    const login = await fetch(new URL('/console/login', a!.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `key=${KEYS.ops}`,
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = /sluice_console=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
    const page = (replica: typeof a) =>
      fetch(new URL('/console/tools', replica!.url), { headers: { cookie }, redirect: 'manual' });
    for (const replica of [b, c, a]) {
      const response = await page(replica);
      await response.text();
      expect(response.status, `console on ${replica!.name}`).toBe(200);
    }
    // The logout form carries the session's token; the page shows it.
    const html = await (await page(b)).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const logout = await fetch(new URL('/console/logout', b!.url), {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrf)}`,
      redirect: 'manual',
    });
    expect(logout.status).toBe(303);
    for (const replica of [a, c]) {
      await until(async () => (await page(replica)).status === 303, `logged out on ${replica!.name}`);
    }
  }, 60_000);
});
