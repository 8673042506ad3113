import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { AuthInfo } from '@sluice/core';
import { ConsoleSessions, cookieOf, csrfMatches } from '../src/admin/console-sessions.js';

const auth = (expiresAt?: number): AuthInfo => ({
  token: '[redacted]',
  clientId: 'ops',
  scopes: ['admin'],
  ...(expiresAt === undefined ? {} : { expiresAt }),
});
function withCookie(cookie?: string): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  if (cookie !== undefined) req.headers.cookie = cookie;
  return req;
}
const limits = { ttlMs: 10_000, idleMs: 4_000, max: 3 };

function sessions() {
  const clock = { now: 1_000_000 };
  return { clock, store: new ConsoleSessions(limits, () => clock.now) };
}

describe('console sessions', () => {
  it('finds a session by its cookie, never by a guess or a malformed value', () => {
    const { store } = sessions();
    const { id, session } = store.create(auth());
    expect(store.of(withCookie(`other=1; sluice_console=${id}`))).toBe(session);
    expect(store.of(withCookie(`sluice_console=${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`))).toBeUndefined();
    expect(store.of(withCookie(`sluice_console=${id}x`))).toBeUndefined();
    expect(store.of(withCookie('sluice_console='))).toBeUndefined();
    expect(store.of(withCookie())).toBeUndefined();
  });

  it('ends a session after its lifetime, after it idles, and when the token it was made with expires', () => {
    const { clock, store } = sessions();
    const lived = store.create(auth()).id;
    const idle = store.create(auth()).id;
    const token = store.create(auth(clock.now / 1_000 + 2)).id;
    for (let i = 0; i < 3; i++) {
      clock.now += 3_000;
      expect(store.of(withCookie(`sluice_console=${lived}`))).toBeDefined();
      if (i === 0) expect(store.of(withCookie(`sluice_console=${token}`))).toBeUndefined();
    }
    expect(store.of(withCookie(`sluice_console=${idle}`))).toBeUndefined();
    clock.now += 1_000;
    expect(store.of(withCookie(`sluice_console=${lived}`))).toBeUndefined();
  });

  it('keeps at most max sessions, ending the least recently used', () => {
    const { store } = sessions();
    const [a, b, c] = [store.create(auth()).id, store.create(auth()).id, store.create(auth()).id];
    store.of(withCookie(`sluice_console=${a}`));
    store.create(auth());
    expect(store.size).toBe(3);
    expect(store.of(withCookie(`sluice_console=${b}`))).toBeUndefined();
    expect(store.of(withCookie(`sluice_console=${a}`))).toBeDefined();
    expect(store.of(withCookie(`sluice_console=${c}`))).toBeDefined();
  });

  it('ends a session on logout', () => {
    const { store } = sessions();
    const { id } = store.create(auth());
    store.end(withCookie(`sluice_console=${id}`));
    expect(store.of(withCookie(`sluice_console=${id}`))).toBeUndefined();
  });

  it("matches only the session's own form token", () => {
    const { store } = sessions();
    const { session } = store.create(auth());
    const other = store.create(auth()).session;
    expect(csrfMatches(session, session.csrf)).toBe(true);
    expect(csrfMatches(session, other.csrf)).toBe(false);
    expect(csrfMatches(session, '')).toBe(false);
    expect(csrfMatches(session, undefined)).toBe(false);
  });

  it('reads a cookie by its exact name, and ignores an oversized header', () => {
    expect(cookieOf(withCookie('xsluice_console=1; sluice_console=2'), 'sluice_console')).toBe('2');
    expect(cookieOf(withCookie(`a=${'x'.repeat(9_000)}; sluice_console=2`), 'sluice_console')).toBeUndefined();
  });
});
