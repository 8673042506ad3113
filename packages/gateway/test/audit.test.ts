// The audit log through a real gateway on Redis: decisions made over the
// admin API and the CLI land in the chain, `GET /admin/v1/audit` pages it as
// JSON Lines, and `sluice audit verify` names an entry modified, deleted or
// moved by someone who edited Redis directly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { Redis } from 'ioredis';
import { captureLogger, errorOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway, GatewayConfigInput } from '@sluice/gateway';
import { call, eventually, httpClient, opsAndAgentKeys, rugPullUpstream, runCli, tempConfig } from './helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';

const OPS_KEY = 'ops-key-0123456789abcdef';
const AGENT_KEY = 'agent-key-0123456789abcdef';
const PREFIX = 'audit-test:';
const ENTRIES = `${PREFIX}audit:{chain}:entries`;

let redis: RedisProcess;
let look: Redis;
let gateway: Gateway;
let client: Client;
let url: string;
const config = tempConfig({});

function configFor(redisUrl: string): GatewayConfigInput {
  return {
    listen: { http: { port: 0, auth: opsAndAgentKeys(OPS_KEY, AGENT_KEY) } },
    upstreams: [rugPullUpstream()],
    plugins: { risk: { ledger: { persist: 'store' } } },
    store: { redis: redisUrl, keyPrefix: PREFIX },
    audit: { maxEntries: 500 },
    admin: { scopes: ['admin'] },
  };
}

async function sluice(args: readonly string[]) {
  const run = runCli([...args, '--config', config.file, '--url', url], { SLUICE_ADMIN_KEY: OPS_KEY });
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

async function page(query: string, key = OPS_KEY): Promise<Response> {
  return fetch(`${url}/admin/v1/audit${query}`, { headers: { authorization: `Bearer ${key}` } });
}

async function memberAt(seq: number): Promise<string> {
  const [member] = await look.zrangebyscore(ENTRIES, seq, seq);
  if (member === undefined) throw new Error(`no entry ${seq}`);
  return member;
}

beforeAll(async () => {
  redis = await startRedis();
  look = new Redis(redis.url);
  gateway = createGateway(configFor(redis.url), { logger: captureLogger().logger });
  const { http } = await gateway.start();
  url = (http?.url as URL).origin;
  client = await httpClient(http?.url as URL, { authorization: `Bearer ${OPS_KEY}` });
  // A hold (the upstream redefines `lookup`), then an operator's approval over the CLI and a revocation over the API.
  await call(client, 'shop_rug_pull');
  await eventually(
    async () => errorOf(await call(client, 'shop_lookup', { id: 'p1' }))?.code === 'TOOL_AWAITING_REREVIEW',
    'the hold',
  );
  expect((await sluice(['ledger', 'approve', 'shop_lookup'])).code).toBe(0);
  const revoked = await fetch(`${url}/admin/v1/ledger/revoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPS_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ server: 'shop', tool: 'lookup' }),
  });
  expect(revoked.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await client.close().catch(() => {});
  await gateway.close();
  look.disconnect();
  await redis.stop();
  config.remove();
});

describe('the audit log of a gateway on Redis', () => {
  it('records the hold and each operator decision with who and how', async () => {
    const answer = await page('');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/jsonl; charset=utf-8');
    const entries = (await answer.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries).toMatchObject([
      { seq: 1, kind: 'ledger.held', server: 'shop', tool: 'lookup', by: 'sluice' },
      { seq: 2, kind: 'ledger.approved', server: 'shop', tool: 'lookup', by: 'key:ops', channel: 'admin-api' },
      { seq: 3, kind: 'ledger.revoked', by: 'key:ops', channel: 'admin-api' },
    ]);
    expect(answer.headers.get('sluice-audit-head')).toBe(`3 ${String(entries[2]?.hash)}`);
    expect(answer.headers.get('sluice-audit-anchor')).toBe(`1 ${'0'.repeat(64)}`);
    expect(answer.headers.get('sluice-audit-next')).toBeNull();
  });

  it('pages with after and limit, and refuses bad paging and callers without the admin scope', async () => {
    const first = await page('?limit=2');
    expect((await first.text()).trim().split('\n')).toHaveLength(2);
    expect(first.headers.get('sluice-audit-next')).toBe('2');
    const rest = await page('?after=2&limit=2');
    expect(
      (await rest.text())
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { seq: number }).seq),
    ).toEqual([3]);
    expect(rest.headers.get('sluice-audit-next')).toBeNull();
    for (const bad of ['?limit=0', '?limit=10001', '?after=-1', '?after=1e3', '?limit=abc'])
      expect((await page(bad)).status, bad).toBe(400);
    expect((await page('', AGENT_KEY)).status).toBe(403);
    expect((await fetch(`${url}/admin/v1/audit`)).status).toBe(401);
  });

  it('exports every entry as stored, and verifies the chain intact', async () => {
    const exported = await sluice(['audit', 'export']);
    expect(exported.code).toBe(0);
    const stored = await look.zrange(ENTRIES, 0, -1);
    expect(exported.stdout).toBe(stored.map((line) => `${line}\n`).join(''));
    const after = await sluice(['audit', 'export', '--after', '2']);
    expect(after.stdout.trim().split('\n')).toHaveLength(1);
    const verified = await sluice(['audit', 'verify']);
    expect(verified).toMatchObject({ code: 0 });
    expect(verified.stdout).toMatch(/^audit log intact: entries 1-3 \(3 read\)/);
  });

  it('names an entry modified, deleted or moved in Redis, and passes again once it is put back', async () => {
    const first = await memberAt(1);
    const second = await memberAt(2);
    const third = await memberAt(3);

    await look.zrem(ENTRIES, second);
    await look.zadd(ENTRIES, 2, second.replace('"key:ops"', '"key:eve"'));
    let verified = await sluice(['audit', 'verify', '--json']);
    expect(verified.code).toBe(1);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: false, problems: [{ kind: 'modified', seq: 2 }] });

    await look.zremrangebyscore(ENTRIES, 2, 2);
    verified = await sluice(['audit', 'verify']);
    expect(verified.code).toBe(1);
    expect(verified.stdout).toContain('audit log TAMPERED');
    expect(verified.stdout).toMatch(/missing\s+#2: entry 2 is missing/);

    await look.zadd(ENTRIES, 2, third);
    await look.zrem(ENTRIES, third);
    await look.zadd(ENTRIES, 2, third, 3, second);
    verified = await sluice(['audit', 'verify', '--json']);
    expect(verified.code).toBe(1);
    const kinds = (JSON.parse(verified.stdout) as { problems: Array<{ kind: string }> }).problems.map((p) => p.kind);
    expect(kinds).toContain('reordered');

    await look.del(ENTRIES);
    await look.zadd(ENTRIES, 1, first, 2, second, 3, third);
    expect((await sluice(['audit', 'verify'])).code).toBe(0);
  });
});
