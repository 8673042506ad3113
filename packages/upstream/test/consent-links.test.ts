// The consent links one caller holds for one upstream: at most eight live at once on a replica, however many
// callers come and go. The attack: a caller asks for links, other callers push it out of the replica's memory of
// who holds what, and it asks again; the links it held before must not stay usable beside the new ones.
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { serveConsentRoutes } from './consent-routes.js';
import { CALLBACK_PATH, CONNECT_PATH, ConsentFlows } from '../src/oauth/consent.js';
import type { PerUserGrants } from '../src/oauth/per-user.js';

/** Callers a replica remembers the links of; one more pushes the one remembered longest out. */
const REMEMBERED_CALLERS = 10_000;

const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

/** The consent routes of `flows` on loopback, and a `per_user` upstream whose links point at them. */
async function serve(flows: ConsentFlows): Promise<PerUserGrants> {
  const origin = await serveConsentRoutes(flows, open);
  // Only what the consent page reads of an upstream's grants.
  const grants = {
    upstream: 'saas',
    options: { redirectUri: `${origin}${CALLBACK_PATH}`, consentTtlSec: 600, clientId: 'sluice' },
    client: {
      discover: () =>
        Promise.resolve({
          authorizationEndpoint: 'https://as.example/authorize',
          resource: 'https://saas.example/mcp',
        }),
    },
  } as unknown as PerUserGrants;
  flows.register(grants);
  return grants;
}

/** How many of these links still open the consent page (each opened link is spent). */
async function usable(links: readonly string[]): Promise<number> {
  let count = 0;
  for (const link of links) if ((await fetch(link)).status === 200) count++;
  return count;
}

describe('the consent links of a caller', () => {
  it("spends a caller's links when the replica forgets it for newer callers: it never holds more than eight", async () => {
    const flows = new ConsentFlows(new MemoryStore(), captureLogger().logger);
    open.push(() => flows.close());
    const grants = await serve(flows);
    const links: string[] = [];
    for (let i = 0; i < 8; i++) links.push((await flows.ask(grants, 'mallory')).url);
    expect(new URL(links[0] ?? '').pathname).toBe(CONNECT_PATH);
    // As many other callers as the replica remembers: Mallory, remembered longest, is pushed out.
    for (let i = 0; i < REMEMBERED_CALLERS; i++) await flows.ask(grants, `caller-${i}`);
    for (let i = 0; i < 8; i++) links.push((await flows.ask(grants, 'mallory')).url);
    // The eight she held before are spent; the newest eight work.
    expect(await usable(links.slice(0, 8))).toBe(0);
    expect(await usable(links.slice(8))).toBe(8);
  }, 60_000);

  it('keeps the links of a caller that keeps asking, and forgets the caller idle longest instead', async () => {
    const flows = new ConsentFlows(new MemoryStore(), captureLogger().logger);
    open.push(() => flows.close());
    const grants = await serve(flows);
    const alice = (await flows.ask(grants, 'alice')).url;
    const idle = (await flows.ask(grants, 'idle')).url;
    for (let i = 0; i < REMEMBERED_CALLERS - 2; i++) await flows.ask(grants, `caller-${i}`);
    // Alice asks again: she is remembered afresh, so the next newcomer pushes out the idle caller, not her.
    const again = (await flows.ask(grants, 'alice')).url;
    await flows.ask(grants, 'newcomer');
    expect(await usable([alice, again])).toBe(2);
    expect(await usable([idle])).toBe(0);
  }, 60_000);
});
