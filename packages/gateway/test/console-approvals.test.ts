/// <reference lib="dom" />
// The console's approval queue in a real headless browser (Debian's chromium through puppeteer-core): an
// operator approves a waiting call from the page and it runs; denies another with a reason and its client
// reads the reason. The page's screenshot is the one in the gateway README (docs/console-approvals.png).
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
import { OPS_KEY, adminOf, paymentsConfig, yesClient } from './operator-helpers.js';

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots, kept as test artefacts (git ignores the folder). */
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));

const available = existsSync(CHROMIUM);
if (!available && (process.env.CI || process.env.SLUICE_REQUIRE_BROWSER))
  throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (the console tests need it)`);

let gateway: Gateway;
let url: URL;
let api: ReturnType<typeof adminOf>;
let browser: Browser;
let page: Page;
const clients: Client[] = [];
const seen = new Set<string>();

beforeAll(async () => {
  if (!available) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  gateway = createGateway(paymentsConfig(), { logger: captureLogger().logger });
  url = (await gateway.start()).http?.url as URL;
  api = adminOf(url);
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // The tests may run as root in a container, where chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 720 });
  // The operator's browser sends the key, as a proxy in front of the console would.
  await page.setExtraHTTPHeaders({ authorization: `Bearer ${OPS_KEY}` });
}, 120_000);

afterAll(async () => {
  if (!available) return;
  await browser.close().catch(() => {});
  for (const client of clients) await client.close().catch(() => {});
  await gateway.close();
});

async function waiting(version: 'legacy' | 'modern', args: Record<string, unknown>) {
  const client = await yesClient(url, version);
  clients.push(client);
  const result = client.callTool({ name: 'pay_transfer', arguments: args });
  // A failed test leaves the call waiting; closing its client then rejects it, which is not a second failure.
  result.catch(() => {});
  return { result, question: await api.next(seen) };
}

const row = (id: string) => `tr[data-approval="${id}"]`;

/**
 * Clicks a button and waits for the page its form leads to. The button is found and clicked in one step inside the
 * page, so the page's refresh cannot swap it for a new element between the two.
 */
async function press(selector: string) {
  await Promise.all([page.waitForNavigation(), page.$eval(selector, (el) => (el as HTMLButtonElement).click())]);
}

describe.skipIf(!available)('the approval queue in the console', () => {
  it('an operator approves a waiting call from the page, and it runs', async () => {
    const before = await api.transfers();
    const legacy = await waiting('legacy', { payee: 'acme supplies', cents: 125_000 });
    const modern = await waiting('modern', { payee: 'globex', cents: 9_900 });
    const answer = await page.goto(new URL('/console/approvals', url).href, { waitUntil: 'domcontentloaded' });
    expect(answer?.status()).toBe(200);
    for (const { question } of [legacy, modern]) {
      const text = await page.$eval(row(question.id), (el) => el.textContent);
      expect(text).toMatch(/pay_transfer[\s\S]*pay[\s\S]*agent[\s\S]*UTC[\s\S]*operator/);
    }
    // The operator decides on what the call does: its arguments, as the approval form shows them.
    expect(await page.$eval(`${row(legacy.question.id)} .question`, (el) => el.textContent)).toBe(
      'Allow the tool "pay_transfer" from upstream "pay" to run? Risk L4 (High). Arguments: {"payee":"acme supplies","cents":125000}',
    );
    await page.screenshot({
      path: join(ARTIFACTS, 'console-approvals.png'),
      clip: { x: 0, y: 0, width: 1280, height: 440 },
    });

    await press(`${row(legacy.question.id)} button.approve`);
    expect(page.url()).toBe(new URL('/console/approvals', url).href);
    expect(textOf(await legacy.result)).toBe(`transfer ${before + 1}: 125000 cents to acme supplies`);
    expect(await page.$(row(legacy.question.id))).toBeNull();

    await press(`${row(modern.question.id)} button.approve`);
    expect(textOf(await modern.result)).toBe(`transfer ${before + 2}: 9900 cents to globex`);
  });

  it('an operator denies with a reason from the page, and the client reads it', async () => {
    const before = await api.transfers();
    const { result, question } = await waiting('legacy', { payee: 'mallory', cents: 50_000 });
    await page.goto(new URL('/console/approvals', url).href, { waitUntil: 'domcontentloaded' });
    // Focused, the field holds the page still: the refresh waits while someone types.
    await page.$eval(`${row(question.id)} form.deny input[name="reason"]`, (el) => el.focus());
    await page.keyboard.type('mallory is not on the supplier list');
    await press(`${row(question.id)} form.deny button`);
    const refused = await result;
    expect(errorOf(refused)?.code).toBe('APPROVAL_DECLINED');
    expect(JSON.stringify(refused.content)).toContain('mallory is not on the supplier list');
    expect(JSON.stringify(refused.content)).toContain('key:ops');
    expect(await api.transfers()).toBe(before);
  });

  it('a refresh that finds nothing new leaves the page as it is, so a button is not swapped under a click', async () => {
    const { result, question } = await waiting('legacy', { payee: 'hooli', cents: 2 });
    const href = new URL('/console/approvals', url).href;
    await page.goto(href, { waitUntil: 'domcontentloaded' });
    // A mark on the element itself, not in the markup the refresh compares.
    const button = `${row(question.id)} button.approve`;
    await page.$eval(button, (el) => Object.assign(el, { marked: true }));
    // Two of the page's own refreshes: the first has been read and compared by the time the second is sent.
    const refreshed = (r: { url(): string; request(): { resourceType(): string } }) =>
      r.url() === href && r.request().resourceType() === 'fetch';
    await page.waitForResponse(refreshed, { timeout: 15_000 });
    await page.waitForResponse(refreshed, { timeout: 15_000 });
    expect(await page.$eval(button, (el) => 'marked' in el)).toBe(true);
    await press(button);
    expect(textOf(await result)).toMatch(/: 2 cents to hooli$/);
  });

  it('drops a question from an open page once it is answered elsewhere', async () => {
    const { result, question } = await waiting('legacy', { payee: 'initech', cents: 1 });
    await page.goto(new URL('/console/live', url).href, { waitUntil: 'domcontentloaded' });
    expect(await page.$(row(question.id))).not.toBeNull();
    expect((await api.request('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
    await result;
    await page.waitForFunction(
      (selector) => document.querySelector(selector) === null,
      { timeout: 15_000 },
      row(question.id),
    );
  });
});
