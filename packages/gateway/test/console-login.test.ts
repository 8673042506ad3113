/// <reference lib="dom" />
// The console's login in a real headless browser (Debian's chromium through puppeteer-core) that sends no
// extra headers: the operator types the admin key into /console/login and works with the session cookie.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import type { Client } from '@modelcontextprotocol/client';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { call, eventually, httpClient, opsAndAgentKeys, rugPullUpstream } from './helpers.js';

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
const OPS_KEY = 'login-ops-key-0123456789';
/** An admin key too random to guess (32 random bytes in hex): it passes a throttled address. */
const STRONG_OPS_KEY = randomBytes(32).toString('hex');
const AGENT_KEY = 'login-agent-key-0123456789';
const MAX_FAILURES = 3;

const available = existsSync(CHROMIUM);
if (!available && (process.env.CI || process.env.SLUICE_REQUIRE_BROWSER))
  throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (the console tests need it)`);

let gateway: Gateway;
let origin: string;
let client: Client;
let browser: Browser;
let page: Page;
let elsewhere: Server;

const text = (selector: string) => page.$eval(selector, (el) => el.textContent);
const lifecycle = async () => {
  const answer = await fetch(`${origin}/admin/v1/ledger`, { headers: { authorization: `Bearer ${OPS_KEY}` } });
  const { tools } = (await answer.json()) as { tools: Array<{ name?: string; lifecycle: string }> };
  return tools.find((t) => t.name === 'shop_lookup')?.lifecycle;
};
const logIn = async (key: string) => {
  await page.goto(`${origin}/console/login`, { waitUntil: 'domcontentloaded' });
  await page.type('#key', key);
  const [answer] = await Promise.all([page.waitForNavigation(), page.click('form.login button')]);
  return answer;
};
const postForm = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${origin}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });

const withStrongOps = (auth: ReturnType<typeof opsAndAgentKeys>) => ({
  ...auth,
  keys: [...auth.keys, { name: 'strong-ops', key: STRONG_OPS_KEY, scopes: ['admin'] }],
});

beforeAll(async () => {
  if (!available) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  gateway = createGateway(
    {
      listen: { http: { port: 0, auth: withStrongOps(opsAndAgentKeys(OPS_KEY, AGENT_KEY)) } },
      upstreams: [rugPullUpstream()],
      plugins: { risk: { ledger: { persist: 'memory' } } },
      admin: { scopes: ['admin'], session: { maxFailures: MAX_FAILURES } },
    },
    { logger: captureLogger().logger },
  );
  const { http } = await gateway.start();
  origin = (http?.url as URL).origin;
  client = await httpClient(http?.url as URL, { authorization: `Bearer ${AGENT_KEY}` });
  // Another site (`localhost`, not the console's `127.0.0.1`) whose page posts a form to the console.
  elsewhere = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<form id="f" method="post" action="${origin}/console/ledger/revoke">
<input name="server" value="shop"><input name="tool" value="lookup"></form><script>document.getElementById('f').submit()</script>`);
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
}, 120_000);

afterAll(async () => {
  if (!available) return;
  await browser.close().catch(() => {});
  await client.close().catch(() => {});
  elsewhere.close();
  await gateway.close();
});

describe.skipIf(!available)('the console login in a browser without extra headers', () => {
  it('sends a browser without a session to the login page, and refuses a wrong key and a key without the admin scope', async () => {
    await page.goto(`${origin}/console/ledger`, { waitUntil: 'domcontentloaded' });
    expect(page.url()).toBe(`${origin}/console/login`);
    await page.screenshot({ path: join(ARTIFACTS, 'login.png') });

    const wrong = await logIn('not-the-key-0123456789');
    expect(wrong?.status()).toBe(401);
    expect(await text('main .note')).toContain('refused');
    const agent = await logIn(AGENT_KEY);
    expect(agent?.status()).toBe(403);
    expect(await text('main .note')).toContain('the admin surface needs the scope admin');
    expect(await browser.cookies()).toEqual([]);
  });

  it('logs in with the admin key: a session cookie that is HttpOnly, SameSite=Strict, for /console only, and not the key', async () => {
    const answer = await logIn(OPS_KEY);
    expect(answer?.status()).toBe(200);
    expect(page.url()).toBe(`${origin}/console/tools`);
    const cookies = await browser.cookies();
    expect(cookies).toHaveLength(1);
    const [cookie] = cookies;
    expect(cookie).toMatchObject({ name: 'sluice_console', path: '/console', httpOnly: true, sameSite: 'Strict' });
    expect(cookie?.secure).toBe(false); // plain HTTP on loopback, and secureCookie is not set
    expect(cookie?.value).not.toContain(OPS_KEY);
    expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await page.evaluate(() => document.cookie)).toBe(''); // out of reach of scripts

    for (const path of ['/console/upstreams', '/console/ledger', '/console/live', '/console/tools']) {
      const shown = await page.goto(`${origin}${path}`, { waitUntil: 'domcontentloaded' });
      expect(shown?.status()).toBe(200);
      expect(await page.$('form.logout button')).not.toBeNull();
    }
    expect(await page.$$('tr[data-tool] .chip.risk')).not.toHaveLength(0);
    // The cookie opens the console, not the admin API: that takes the key in a header.
    expect((await page.goto(`${origin}/admin/v1/ledger`))?.status()).toBe(401);
  });

  it('approves a rug-pulled tool from the logged-in browser, recorded as the key that logged in', async () => {
    await call(client, 'shop_rug_pull');
    await eventually(
      async () => errorOf(await call(client, 'shop_lookup', { id: 'p1' }))?.code === 'TOOL_AWAITING_REREVIEW',
      'the redefined tool to be held',
    );
    await page.goto(`${origin}/console/ledger`, { waitUntil: 'domcontentloaded' });
    const review = 'section.review[data-tool="shop_lookup"]';
    expect(await page.$eval(`${review} form input[name="csrf"]`, (el) => el.value)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await page.screenshot({ path: join(ARTIFACTS, 'login-ledger.png'), fullPage: true });
    await Promise.all([page.waitForNavigation(), page.click(`${review} button.approve`)]);
    expect(page.url()).toBe(`${origin}/console/ledger`);
    expect(await text('tr[data-ledger="shop_lookup"]')).toMatch(/ACTIVE[\s\S]*approved by key:ops/);
    expect(textOf(await call(client, 'shop_lookup', { id: 'p2', notes: '-' }))).toBe('product p2: teapot, 12 EUR');
  });

  it('refuses a post from another site, and a post of the session without its form token', async () => {
    const port = (elsewhere.address() as AddressInfo).port;
    const attacker = await browser.newPage();
    try {
      const [landed] = await Promise.all([
        attacker.waitForNavigation(),
        attacker.goto(`http://localhost:${port}/`, { waitUntil: 'domcontentloaded' }),
      ]);
      expect(attacker.url()).toBe(`${origin}/console/ledger/revoke`);
      expect([401, 403]).toContain(landed?.status());
    } finally {
      await attacker.close();
    }
    expect(await lifecycle()).toBe('ACTIVE');

    await page.goto(`${origin}/console/ledger`, { waitUntil: 'domcontentloaded' });
    const status = await page.evaluate(async () => {
      const body = new URLSearchParams({ server: 'shop', tool: 'lookup' });
      return (await fetch('/console/ledger/revoke', { method: 'POST', body })).status;
    });
    expect(status).toBe(403);
    expect(await lifecycle()).toBe('ACTIVE');
  });

  it('logs out: back to the login page, and the old cookie opens nothing', async () => {
    await page.goto(`${origin}/console/tools`, { waitUntil: 'domcontentloaded' });
    const [cookie] = await browser.cookies();
    await Promise.all([page.waitForNavigation(), page.click('form.logout button')]);
    expect(page.url()).toBe(`${origin}/console/login`);
    expect(await browser.cookies()).toEqual([]);
    const replayed = await fetch(`${origin}/console/tools`, {
      redirect: 'manual',
      headers: { cookie: `sluice_console=${cookie?.value ?? ''}` },
    });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toBe('/console/login');
  });

  it('refuses logins from an address after too many failures, saying when to retry, but not a key too random to guess', async () => {
    for (let i = 0; i < MAX_FAILURES; i++)
      expect((await postForm('/console/login', { key: `wrong-key-${i}-0123456789` })).status).toBe(401);
    const throttled = await postForm('/console/login', { key: 'wrong-key-again-0123456789' });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(throttled.headers.get('set-cookie')).toBeNull();
    // The operator's guessable key logged in earlier in this file, yet it waits with the guessers: nothing in a
    // login tells its holder from a guesser who has just found it.
    const guessable = await postForm('/console/login', { key: OPS_KEY });
    expect(guessable.status).toBe(429);
    expect(guessable.headers.get('set-cookie')).toBeNull();
    // A key too random to guess is not locked out by guessers at the same address.
    const operator = await postForm('/console/login', { key: STRONG_OPS_KEY });
    expect(operator.status).toBe(303);
    expect(operator.headers.get('set-cookie')).toContain('sluice_console=');
  });
});
