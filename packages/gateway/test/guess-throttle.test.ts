// Key guessing against a real gateway over loopback: wrong keys in the
// Authorization header on /mcp and /admin/v1, sent at once and from rotating
// loopback addresses, are checked at most a bounded number of times, then
// refused unchecked with 429; the rightful key keeps working throughout.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeWithKey, postWithKey, requestFrom } from './attackers.js';
import type { Answer } from './attackers.js';
import { fixtureUpstream, opsAndAgentKeys, sample, serve } from './helpers.js';
import type { Served } from './helpers.js';

const OPS_KEY = 'guess-throttle-ops-key-0123456789';
const AGENT_KEY = 'guess-throttle-agent-key-0123456789';
/** The gateway's default: failed checks one source may cause per window. */
const MAX_FAILURES = 20;

const post = postWithKey;

/** `sluice serve` with these API keys, one fixture upstream and the admin surface on the scope `admin`. */
const serveKeys = (keys: { name: string; key: string; scopes?: string[] }[], session: Record<string, unknown> = {}) =>
  serve({
    listen: { http: { port: 0, auth: { type: 'apiKeys', keys } } },
    upstreams: [fixtureUpstream('fx')],
    admin: { scopes: ['admin'], session },
  });

describe('credential guessing on every route', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve({
      listen: { http: { port: 0, auth: opsAndAgentKeys(OPS_KEY, AGENT_KEY) } },
      upstreams: [fixtureUpstream('fx')],
      admin: { scopes: ['admin'] },
    });
  }, 60_000);
  afterAll(async () => served.stop());

  it('checks at most the limit of concurrent wrong keys from rotating addresses, then answers 429; the rightful key still works', async () => {
    const admin = new URL('/admin/v1/upstreams', served.url);
    // The operator works before the attack.
    expect(await post(served.url, OPS_KEY, '127.0.0.1')).toBe(200);
    // 300 guesses at once, from 127.0.0.2 .. 127.0.1.45, split across /mcp and the admin API.
    const guesses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        post(i % 2 === 0 ? served.url : admin, `wrong-${i}`, `127.0.${Math.floor((i + 2) / 256)}.${(i + 2) % 256}`),
      ),
    );
    const checked = guesses.filter((s) => s === 401).length;
    const throttled = guesses.filter((s) => s === 429).length;
    expect(checked + throttled).toBe(300);
    expect(checked).toBeLessThanOrEqual(MAX_FAILURES);
    expect(throttled).toBeGreaterThanOrEqual(300 - MAX_FAILURES);
    // A further guess is refused unchecked; the rightful keys, from the attacked address, still work.
    expect(await post(served.url, 'wrong-again', '127.0.0.9')).toBe(429);
    expect(await post(served.url, OPS_KEY, '127.0.0.9')).toBe(200);
    const ledger = await fetch(admin, { headers: { authorization: `Bearer ${OPS_KEY}` } });
    expect(ledger.status).toBe(200);
    // Logged at a bounded rate, never with the key; counted in /metrics.
    const logged = served.run
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"http.auth_failed"')).length;
    expect(logged).toBeGreaterThan(0);
    expect(logged).toBeLessThanOrEqual(MAX_FAILURES + 2);
    expect(served.run.stderr()).not.toContain('wrong-1');
    const metrics = await (
      await fetch(new URL('/metrics', served.url), { headers: { authorization: `Bearer ${OPS_KEY}` } })
    ).text();
    expect(sample(metrics, 'sluice_http_auth_failures_total{outcome="refused"}')).toBe(checked);
    expect(sample(metrics, 'sluice_http_auth_failures_total{outcome="throttled"}')).toBe(throttled + 1);
  }, 60_000);
});

describe('a key used for the first time while guessers at its address are throttled', () => {
  const OPS = 'guess-throttle-first-ops-key-0123456789';
  /** Random enough that no guesser can reach it: 32 random bytes, as `sluice init` suggests making keys. */
  const FRESH = randomBytes(32).toString('hex');
  /** Sixteen characters, but only four distinct ones repeated: a guesser can reach it. */
  const WEAK = 'weakweakweakweak';
  let served: Served;
  beforeAll(async () => {
    served = await serveKeys([
      { name: 'ops', key: OPS, scopes: ['admin'] },
      { name: 'fresh', key: FRESH },
      { name: 'weak', key: WEAK },
    ]);
  }, 60_000);
  afterAll(async () => served.stop());

  it('admits a strong key never used since start, and keeps guesses and a guessable key throttled', async () => {
    const guesses = await Promise.all(
      Array.from({ length: MAX_FAILURES + 10 }, (_, i) => post(served.url, `wrong-${i}`, `127.0.2.${i + 1}`)),
    );
    expect(guesses.filter((s) => s === 401).length).toBeLessThanOrEqual(MAX_FAILURES);
    expect(guesses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
    // The source is over its budget. A key too random to guess is checked anyway, on its first use.
    expect(await post(served.url, FRESH, '127.0.2.200')).toBe(200);
    // Guessing stays throttled: wrong keys, and a right key a guesser could have reached, are refused unchecked.
    expect(await post(served.url, 'wrong-after', '127.0.2.201')).toBe(429);
    expect(await post(served.url, WEAK, '127.0.2.202')).toBe(429);
    expect(await post(served.url, `${FRESH.slice(0, -1)}${FRESH.endsWith('0') ? '1' : '0'}`, '127.0.2.203')).toBe(429);
    const stderr = served.run.stderr();
    expect(stderr).toContain('"http.guessable_key"');
    expect(stderr).not.toContain(WEAK);
    expect(stderr).not.toContain(FRESH);
  }, 60_000);
});

describe('a guessable key used before, while guessers at its address are throttled', () => {
  /** A key a person might choose: under 128 estimated bits, so a guesser can reach it. */
  const WEAK = 'ops-console-2026';
  const STRONG = randomBytes(32).toString('hex');
  let served: Served;
  beforeAll(async () => {
    // The console's own failed-login limit out of the way: the listener's throttle is what is attacked here.
    served = await serveKeys(
      [
        { name: 'weak', key: WEAK, scopes: ['admin'] },
        { name: 'strong', key: STRONG, scopes: ['admin'] },
      ],
      { maxFailures: 1_000 },
    );
  }, 60_000);
  afterAll(async () => served.stop());

  /** The three routes a guess can take, each sent from `address` with `key`. */
  const routes = {
    mcp: (key: string, address: string) => initializeWithKey(served.url, key, address),
    admin: (key: string, address: string) =>
      requestFrom(new URL('/admin/v1/upstreams', served.url), address, { headers: { authorization: `Bearer ${key}` } }),
    login: (key: string, address: string) =>
      requestFrom(new URL('/console/login', served.url), address, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: served.url.origin },
        body: new URLSearchParams({ key }).toString(),
      }),
  };

  /** What a guesser can compare: everything but the date, a page's CSP nonce, and `Retry-After`'s count down. */
  const seen = (answer: Answer) => {
    const headers = { ...answer.headers };
    delete headers.date;
    const retryAfter = headers['retry-after'];
    delete headers['retry-after'];
    const nonce = /nonce-[A-Za-z0-9+/=]+|nonce="[A-Za-z0-9+/=]+"/g;
    return {
      status: answer.status,
      retryAfter: retryAfter === undefined ? 'none' : 'some',
      headers: JSON.parse(JSON.stringify(headers).replace(nonce, 'nonce')) as unknown,
      body: answer.body.replace(nonce, 'nonce'),
    };
  };

  it('answers a right guess exactly as a wrong one on every route, and lets only the strong key through', async () => {
    // The weak key's holder works before the attack: a call, the admin API, a console login.
    expect((await routes.mcp(WEAK, '127.0.3.1')).status).toBe(200);
    expect((await routes.admin(WEAK, '127.0.3.1')).status).toBe(200);
    expect((await routes.login(WEAK, '127.0.3.1')).status).toBe(303);
    // Guessers at the same source use its budget.
    const guesses = await Promise.all(
      Array.from({ length: MAX_FAILURES + 10 }, (_, i) => post(served.url, `wrong-${i}`, `127.0.3.${i + 2}`)),
    );
    expect(guesses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
    // A guesser at the throttled source now tries the used weak key and a wrong one on each route: no difference.
    for (const [name, route] of Object.entries(routes)) {
      const right = await route(WEAK, '127.0.3.100');
      const wrong = await route('ops-console-2025', '127.0.3.101');
      expect(seen(right), name).toEqual(seen(wrong));
      expect(right.status, name).not.toBe(200);
      expect(right.status, name).not.toBe(303);
    }
    // A key too random to guess is still checked at the throttled source.
    expect((await routes.mcp(STRONG, '127.0.3.102')).status).toBe(200);
    expect((await routes.admin(STRONG, '127.0.3.102')).status).toBe(200);
    expect((await routes.login(STRONG, '127.0.3.102')).status).toBe(303);
  }, 60_000);
});
