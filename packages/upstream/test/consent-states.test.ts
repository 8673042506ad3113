// The sign-ins a caller starts by opening its consent links: each opened link spends its ticket and starts a sign-in
// whose state waits in the store (the store every caller shares, Redis on a fleet) for the callback. The attack: one
// caller asks for a link and opens it (a plain GET of a public page), over and over. At most eight of a caller's
// sign-ins per upstream stay on a replica: a newer one replaces its oldest, so the caller never grows the store, and
// another caller's sign-in, started before the flood, still completes. The authorization server is a real
// oidc-provider, and the other caller's consent is walked by a real headless chromium.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '@sluice/core';
import type { CallerIdentity, Clock, SetOptions } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { perUserAuth, startConsentServer } from '../../core/test/helpers/consent-authorization-server.js';
import type { ConsentServer } from '../../core/test/helpers/consent-authorization-server.js';
import { consentInBrowser, launchChromium } from '../../core/test/helpers/consent-browser.js';
import { TokenClient } from '../src/oauth/authorizer.js';
import { serveConsentRoutes } from './consent-routes.js';
import { CALLBACK_PATH, ConsentFlows } from '../src/oauth/consent.js';
import { CredentialVault } from '../src/oauth/credential-vault.js';
import { isUpstreamAuthError } from '../src/oauth/errors.js';
import { PerUserAuthSchema } from '../src/oauth/options.js';
import { PerUserGrants } from '../src/oauth/per-user.js';

const RESOURCE = 'https://saas.example/mcp';
/** A caller's sign-ins a replica keeps per upstream; one more replaces the oldest. */
const SIGN_INS_PER_CALLER = 8;
const STATES = 'sluice:upstream-consent:state:';

let as: ConsentServer;
let browser: Awaited<ReturnType<typeof launchChromium>>;
beforeAll(async () => {
  as = await startConsentServer();
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser.close().catch(() => {});
  await as.close();
});

const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

/** A memory store that can say which of the keys ever written under a prefix it still holds. */
class KeptStore extends MemoryStore {
  private readonly written = new Set<string>();

  override async set(key: string, value: unknown, options?: SetOptions): Promise<void> {
    this.written.add(key);
    await super.set(key, value, options);
  }

  async kept(prefix: string): Promise<number> {
    let live = 0;
    for (const key of this.written) if (key.startsWith(prefix) && (await this.get(key)) !== undefined) live++;
    return live;
  }
}

const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

interface Consent {
  readonly store: KeptStore;
  readonly grants: PerUserGrants;
  /** A fresh consent link for `subject`, as a call without a grant gets it. */
  link(subject: string): Promise<string>;
  /** Whether `subject` has a grant the upstream can be called with. */
  connected(subject: string): Promise<boolean>;
}

/**
 * The consent pages of a `per_user` upstream on loopback: the real flows, grants and vault; `auth`: its `per_user`
 * settings once the callback's address is known.
 */
async function consent(auth: (redirectUri: string) => unknown): Promise<Consent> {
  const store = new KeptStore();
  const flows = new ConsentFlows(store, captureLogger().logger);
  open.push(() => flows.close());
  const redirectUri = `${await serveConsentRoutes(flows, open)}${CALLBACK_PATH}`;
  const options = PerUserAuthSchema.parse(auth(redirectUri));
  const vault = new CredentialVault(store.credentials, {
    keys: [{ id: 'k1', key: randomBytes(32).toString('base64') }],
  });
  const grants = new PerUserGrants(new TokenClient('saas', new URL(RESOURCE), options, systemClock), options, {
    vault,
    store,
    consent: flows,
  });
  const as = (subject: string) => {
    const caller: CallerIdentity = { method: 'apiKey', subject, clientId: subject, scopes: [] };
    return grants.forCaller(caller);
  };
  return {
    store,
    grants,
    link: async (subject) => {
      const error = await as(subject)
        .authorization()
        .then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
      if (!isUpstreamAuthError(error) || !('link' in error)) throw new Error(`no consent link: ${String(error)}`);
      return (error as { link: { url: string } }).link.url;
    },
    connected: async (subject) => (await as(subject).authorization()).startsWith('Bearer '),
  };
}

/** Opens a consent link as a browser would: the sign-in's state, from the page's link on to the authorization server. */
async function openLink(link: string): Promise<string> {
  const page = await fetch(link);
  const html = await page.text();
  expect(page.status, html).toBe(200);
  const href = /id="continue" href="([^"]+)"/.exec(html)?.[1] ?? '';
  return new URL(href.replaceAll('&amp;', '&')).searchParams.get('state') ?? '';
}

/**
 * Whether a sign-in with this state still waits: its callback, sent back declined, finds it ("Not connected")
 * rather than not ("This sign-in is not valid"). The probe spends it.
 */
async function waits(link: string, state: string): Promise<boolean> {
  const callback = new URL(CALLBACK_PATH, link);
  callback.searchParams.set('state', state);
  callback.searchParams.set('error', 'access_denied');
  const html = await (await fetch(callback)).text();
  if (html.includes('<h1>Not connected</h1>')) return true;
  expect(html).toContain('<h1>This sign-in is not valid</h1>');
  return false;
}

describe('the sign-ins a caller starts', () => {
  it("keeps eight of one caller's sign-ins however many links it opens, and another caller's still completes", async () => {
    const c = await consent((redirectUri) => {
      as.register(redirectUri);
      return perUserAuth(as.issuer, RESOURCE, redirectUri);
    });
    // Alice signs in at the authorization server; her browser's way back to the gateway waits until after the flood.
    const back = await consentInBrowser(browser, await c.link('alice'), 'alice-at-saas', { intercept: true });
    // Mallory asks for a link and opens it, 1,000 times.
    const states: string[] = [];
    let link = '';
    for (let i = 0; i < 1_000; i++) {
      link = await c.link('mallory');
      states.push(await openLink(link));
    }
    // Alice's one, and Mallory's newest eight.
    expect(await c.store.kept(STATES)).toBe(1 + SIGN_INS_PER_CALLER);
    const page = await fetch(back);
    expect(await page.text()).toContain('<h1>Connected</h1>');
    expect(await c.connected('alice')).toBe(true);
    expect(await waits(link, states[0] ?? '')).toBe(false);
    expect(await waits(link, states.at(-1) ?? '')).toBe(true);
  }, 120_000);

  it('keeps each caller its newest sign-ins, whatever the others open', async () => {
    const opening = fc.array(fc.constantFrom('ann', 'bob', 'cy'), { minLength: 1, maxLength: 40, size: 'max' });
    await fc.assert(
      fc.asyncProperty(opening, async (callers) => {
        // Never reached: its endpoints are configured, and a probe's callback is declined before a code is redeemed.
        const c = await consent((redirectUri) => ({
          ...perUserAuth('https://as.example', RESOURCE, redirectUri),
          tokenEndpoint: 'https://as.example/token',
          authorizationEndpoint: 'https://as.example/authorize',
        }));
        const opened: Array<{ caller: string; state: string }> = [];
        let link = '';
        for (const caller of callers) {
          link = await c.link(caller);
          opened.push({ caller, state: await openLink(link) });
        }
        // The model: each caller's newest eight wait, and nothing else.
        const newest = new Set(
          ['ann', 'bob', 'cy'].flatMap((caller) =>
            opened
              .filter((o) => o.caller === caller)
              .slice(-SIGN_INS_PER_CALLER)
              .map((o) => o.state),
          ),
        );
        expect(await c.store.kept(STATES)).toBe(newest.size);
        for (const { state } of opened) expect(await waits(link, state)).toBe(newest.has(state));
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
