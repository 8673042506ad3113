// 2025-11-25 sessions and console logins in a fleet of three `sluice serve` replicas behind HAProxy
// with no stick rules: every request goes round-robin, and any replica serves it.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fleetAvailable, fleetClient, servedEverywhere, textOf, until } from './harness.js';
import { startFleet } from './harness.js';
import type { Fleet, FleetClient, Replica } from './harness.js';

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

  /** One client per replica, connected to it directly (not through HAProxy). */
  const direct = new Map<Replica, Client>();
  afterAll(async () => {
    await Promise.allSettled([...direct.values()].map((c) => c.close()));
  });

  /** Calls a tool on one replica directly, as a client of its own. */
  async function onReplica(replica: Replica, name: string, args: Record<string, unknown> = {}): Promise<string> {
    let client = direct.get(replica);
    if (client === undefined) {
      client = new Client({ name: 'direct', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(replica.url, {
          requestInit: { headers: { authorization: `Bearer ${KEYS.agent}` } },
        }),
      );
      direct.set(replica, client);
    }
    return textOf(await client.callTool({ name, arguments: args }));
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
    for (const replica of fleet.replicas) await onReplica(replica, 'up_grow');
    await until(() => changed > 0, 'tools/list_changed on the GET stream');
    await until(
      async () => (await client.client.listTools()).tools.some((t) => t.name === 'up_extra1'),
      'the new tool listed',
    );
  }, 60_000);

  it("relays the progress of a call run on one replica, and cancels it from another, while the session's requests go round the fleet", async () => {
    const client = await session();
    fleet.gate.shut('steps');
    const run = (tag: string, signal?: AbortSignal) => {
      const notes: string[] = [];
      const call = client.client.callTool(
        { name: 'up_steps', arguments: { tag } },
        { timeout: 60_000, onprogress: (p) => notes.push(p.message ?? ''), ...(signal ? { signal } : {}) },
      );
      return { notes, call };
    };
    // One call runs to its end: three notes, from the replica whose POST carries them, then its answer.
    const done = run('kept');
    await until(() => done.notes.length === 3, 'three progress notes of the kept call');
    const [kept] = sent(client, /"tag":"kept"/);
    expect(done.notes).toEqual([1, 2, 3].map((step) => `kept step ${step} on ${kept!.replica}`));
    // Meanwhile the session's next requests are served elsewhere.
    const others = [textOf(await client.call('up_whoami')), textOf(await client.call('up_whoami'))];
    expect(others.some((replica) => replica !== kept!.replica)).toBe(true);
    fleet.gate.release('steps');
    expect(textOf(await done.call)).toBe(`kept done by ${kept!.replica}`);

    // Another is cancelled after its notes: the cancellation lands on another replica and stops the call upstream.
    const abort = new AbortController();
    const dropped = run('dropped', abort.signal);
    await until(() => dropped.notes.length === 3, 'three progress notes of the dropped call');
    await until(() => fleet.gate.inside('steps') === 1, 'the dropped call at the gate');
    const [posted] = sent(client, /"tag":"dropped"/);
    expect(dropped.notes[2]).toBe(`dropped step 3 on ${posted!.replica}`);
    abort.abort('the user gave up');
    await expect(dropped.call).rejects.toThrow();
    await until(() => fleet.gate.inside('steps') === 0, 'the dropped call cancelled upstream');
    const [cancelled] = sent(client, /notifications\/cancelled/);
    expect(cancelled!.replica).not.toBe(posted!.replica);
    expect(dropped.notes).toHaveLength(3);
  }, 60_000);

  it('routes resource updates to the GET stream wherever the subscription landed, and stops them at unsubscribe', async () => {
    const client = await session();
    const updates: string[] = [];
    client.client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params.uri);
    });
    await until(() => client.requests.some((r) => r.method === 'GET' && r.replica !== null), 'the GET stream');
    const uris = ['file:///memo/one', 'file:///memo/two', 'file:///memo/three'];
    // Three subscriptions in a row go round the fleet: at least two land on a replica that does not hold the stream.
    for (const uri of uris) await client.client.subscribeResource({ uri });
    const holder = client.requests.find((r) => r.method === 'GET' && r.replica !== null)!.replica;
    const landed = sent(client, /"method":"resources\/subscribe"/).map((r) => r.replica);
    expect(landed.some((replica) => replica !== holder)).toBe(true);
    // Every replica serving the session holds its subscriptions upstream, the stream's holder included.
    const held = async (replica: Replica) => JSON.parse(await onReplica(replica, 'up_subscribed')) as string[];
    const holding = async (replica: Replica, expected: string[]) =>
      JSON.stringify(await held(replica)) === JSON.stringify([...expected].sort());
    for (const replica of fleet.replicas)
      await until(() => holding(replica, uris), `the subscriptions held upstream on ${replica.name}`);
    // An update heard by any replica's upstream reaches the client on its stream: once per replica that heard it.
    for (const replica of fleet.replicas)
      await onReplica(replica, 'up_touch', { uris: ['file:///memo/other', ...uris] });
    const count = (uri: string) => updates.filter((u) => u === uri).length;
    await until(() => uris.every((uri) => count(uri) === 3), 'three updates of each subscribed resource');
    expect(count('file:///memo/other')).toBe(0);

    // Unsubscribed through whichever replica: no replica's upstream holds it any more, and no update of it arrives.
    await client.client.unsubscribeResource({ uri: 'file:///memo/one' });
    const left = uris.slice(1);
    for (const replica of fleet.replicas)
      await until(() => holding(replica, left), `the unsubscription applied on ${replica.name}`);
    // Each replica's update of `one` would travel before its update of `two` on the same path.
    for (const replica of fleet.replicas)
      await onReplica(replica, 'up_touch', { uris: ['file:///memo/one', 'file:///memo/two'] });
    await until(() => count('file:///memo/two') === 6, 'the updates that follow');
    expect(count('file:///memo/one')).toBe(3);
    expect(count('file:///memo/other')).toBe(0);
  }, 60_000);

  it("unsubscribes every replica's upstream from what an ended session alone subscribed to", async () => {
    const client = await session();
    const mine = ['file:///memo/four', 'file:///memo/five'];
    for (const uri of mine) await client.client.subscribeResource({ uri });
    const held = async (replica: Replica) => JSON.parse(await onReplica(replica, 'up_subscribed')) as string[];
    // Applied by every replica serving the session: make sure each holds a copy, then that each subscribed.
    expect(await servedEverywhere(client)).toEqual(new Set(['a', 'b', 'c']));
    const holdsAll = async (replica: Replica) => {
      const now = await held(replica);
      return mine.every((uri) => now.includes(uri));
    };
    for (const replica of fleet.replicas) await until(() => holdsAll(replica), `held on ${replica.name}`);
    const before = new Map<Replica, string[]>();
    for (const replica of fleet.replicas) before.set(replica, await held(replica));
    await (client.client.transport as StreamableHTTPClientTransport).terminateSession();
    // The DELETE is answered before the other replicas hear of it: wait for each copy to go, and its subscriptions.
    for (const replica of fleet.replicas) {
      const others = before.get(replica)!.filter((uri) => !mine.includes(uri));
      await until(
        async () => JSON.stringify(await held(replica)) === JSON.stringify(others),
        `the ended session's subscriptions given back on ${replica.name}`,
      );
    }
  }, 60_000);

  /** Logs in on replica a, and checks the login works on all three: its cookie, a page request and a logout. */
  async function consoleLogin() {
    const [a, b, c] = fleet.replicas;
    const login = await fetch(new URL('/console/login', a!.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `key=${KEYS.ops}`,
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = /sluice_console=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
    const id = cookie.slice('sluice_console='.length);
    // How Redis keeps it: under the SHA-256 of the cookie.
    const record = `${fleet.keyPrefix}kv:console-login:${createHash('sha256').update(id).digest('base64url')}`;
    const page = async (replica: Replica) => {
      const response = await fetch(new URL('/console/tools', replica.url), { headers: { cookie }, redirect: 'manual' });
      await response.text();
      return response.status;
    };
    for (const replica of [b, c, a]) expect(await page(replica!), `console on ${replica!.name}`).toBe(200);
    /** Logs out through a replica: the logout form carries the session's token, which the page shows. */
    const logout = async (replica: Replica) => {
      const html = await (
        await fetch(new URL('/console/tools', replica.url), { headers: { cookie }, redirect: 'manual' })
      ).text();
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
      const response = await fetch(new URL('/console/logout', replica.url), {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: `csrf=${encodeURIComponent(csrf)}`,
        redirect: 'manual',
      });
      expect(response.status).toBe(303);
    };
    return { page, record, logout };
  }

  it('accepts a console login made on one replica on the two others, and ends it everywhere on logout', async () => {
    const [a, b, c] = fleet.replicas;
    const login = await consoleLogin();
    await login.logout(b!);
    for (const replica of [a, c])
      await until(async () => (await login.page(replica!)) === 303, `logged out on ${replica!.name}`);
  }, 60_000);

  it('ends a login on every replica when its end reaches the store but not the bus, and a late refresh cannot undo a logout', async () => {
    // Attack: a caller floods the bus until Redis drops the replicas' subscriber connections, so that a logout's
    // message is lost: the other replicas' copies of the login kept answering, and their next refresh wrote the
    // login back into the store for every replica.
    const redis = fleet.redis.client;
    // A logout reaches the store (its mark, then the record's delete), and no replica hears of it: every copy stops
    // within the check interval.
    const lost = await consoleLogin();
    expect(await redis.exists(lost.record)).toBe(1);
    await redis.set(lost.record.replace(':console-login:', ':console-logout:'), 'true', 'PX', 60_000);
    await redis.del(lost.record);
    for (const replica of fleet.replicas)
      await until(async () => (await lost.page(replica)) === 303, `the lost logout on ${replica.name}`);
    // A real logout, then the record written back as a refresh racing it would: the logout's mark still holds.
    const raced = await consoleLogin();
    const saved = await redis.get(raced.record);
    expect(saved).not.toBeNull();
    await raced.logout(fleet.replicas[1]!);
    await redis.set(raced.record, saved!, 'PX', 60_000);
    for (const replica of fleet.replicas)
      await until(async () => (await raced.page(replica)) === 303, `the raced logout on ${replica.name}`);
  }, 60_000);

  it('leaves nothing in Redis for a logout naming a cookie of no login, whatever key posts it', async () => {
    // Attack: any key the listener accepts may post a logout; with a made-up cookie each one left a mark in Redis
    // for a login's whole life (8 h by default).
    const redis = fleet.redis.client;
    const marks = async () => (await redis.keys(`${fleet.keyPrefix}kv:console-logout:*`)).length;
    const before = await marks();
    for (let i = 0; i < 20; i++) {
      const response = await fetch(new URL('/console/logout', fleet.replicas[i % 3]!.url), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEYS.agent}`,
          cookie: `sluice_console=${randomBytes(32).toString('base64url')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: '',
        redirect: 'manual',
      });
      await response.text();
      expect(response.status).toBe(303);
    }
    expect(await marks()).toBe(before);
  }, 60_000);
});
