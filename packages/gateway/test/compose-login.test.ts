/// <reference lib="dom" />
// The compose deployment's console login as an operator makes it: a real browser (chromium) opens the
// console through a real HAProxy running deploy/haproxy.cfg, in front of `sluice serve` running the
// shipped deploy/sluice.config.json with a real Redis. Only what Docker provides is replaced: the
// replicas' DNS names become loopback ports, and the balancer's port is a free one it holds alone.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import puppeteer from 'puppeteer-core';
import type { Browser } from 'puppeteer-core';
import { z } from 'zod';
import { createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { eventually, runCli, tempConfig } from './helpers.js';
import { freePort, startBalancer } from './fleet/harness.js';
import type { CliRun } from './helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';
import '@sluice/http';

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));
const available = existsSync(CHROMIUM) && HAPROXY !== undefined;
const deploy = (file: string) => fileURLToPath(new URL(`../../../deploy/${file}`, import.meta.url));
const ADMIN_KEY = 'compose-admin-key-0123456789';

/** deploy/haproxy.cfg with Docker's parts swapped for loopback: no DNS resolver, fixed ports. */
function loopbackHaproxy(balancerPort: number, replicaPort: number): string {
  const cfg = readFileSync(deploy('haproxy.cfg'), 'utf8');
  expect(cfg).toContain('bind :8080');
  return cfg
    .replace('bind :8080', `bind 127.0.0.1:${balancerPort}`)
    .replace(/^\s*default-server .*resolvers docker\s*$/m, '')
    .replace(/^resolvers docker\n(?:[ \t]+.*\n)*/m, '')
    .replace(/server a sluice-a:3000/, `server a 127.0.0.1:${replicaPort}`)
    .replace(/^\s*server b sluice-b:3000.*$/m, '');
}

let redis: RedisProcess | undefined;
let upstream: SluiceServer | undefined;
let gateway: CliRun | undefined;
let haproxy: { stop(): Promise<void> } | undefined;
let browser: Browser | undefined;
let balancer: string;
const folder = tempConfig('{}', 'haproxy.cfg');

beforeAll(async () => {
  if (!available) return;
  redis = await startRedis();
  upstream = createServer({ name: 'tools', version: '1.0.0', logger: captureLogger().logger });
  upstream.tool({
    name: 'search',
    inputSchema: z.object({ q: z.string() }),
    handler: ({ q }) => ({ content: [{ type: 'text', text: q }] }),
  });
  const upstreamListener = await upstream.listen();
  const replicaPort = await freePort();
  // The balancer first, on a port it holds alone: the replica is told its address.
  const started = await startBalancer((port) => loopbackHaproxy(port, replicaPort), folder.file);
  haproxy = started;
  balancer = `http://localhost:${started.port}`;
  gateway = runCli(['serve', '--config', deploy('sluice.config.json'), '--log-format', 'json'], {
    SLUICE_AGENT_KEY: 'compose-agent-key-0123456789',
    SLUICE_ADMIN_KEY: ADMIN_KEY,
    SLUICE_APPROVAL_KEY: 'compose-approval-key-0123456789abcdef',
    UPSTREAM_URL: String(upstreamListener.url),
    REDIS_URL: redis.url,
    SLUICE_PORT: String(replicaPort),
    SLUICE_RISK_LEDGER: `${folder.dir}/ledger.json`,
    // What compose.yaml gives the replicas: the address browsers use, the balancer's.
    SLUICE_PUBLIC_ORIGIN: balancer,
  });
  await gateway.event('gateway.ready');
  await eventually(async () => (await fetch(`${balancer}/readyz`).catch(() => undefined))?.status === 200, 'HAProxy');
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}, 120_000);

afterAll(async () => {
  if (!available) return;
  await browser?.close().catch(() => {});
  await haproxy?.stop();
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  await upstream?.close();
  await redis?.stop();
  folder.remove();
});

describe.skipIf(!available)('the compose deployment behind HAProxy', () => {
  it('lets an operator log in to the console from a browser at the balancer address', async () => {
    const page = await browser!.newPage();
    await page.goto(`${balancer}/console/login`, { waitUntil: 'domcontentloaded' });
    await page.type('#key', ADMIN_KEY);
    const [answer] = await Promise.all([page.waitForNavigation(), page.click('form.login button')]);
    const body = await page.$eval('body', (el) => el.textContent);
    expect(answer?.status(), body.slice(0, 300)).toBe(200);
    expect(page.url()).toBe(`${balancer}/console/tools`);
    expect((await browser!.cookies()).map((c) => c.name)).toEqual(['sluice_console']);
    await page.close();
  });
});
