import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@sluice/core';

/** The console's session cookie. */
export const SESSION_COOKIE = 'sluice_console';

/** A console login: who logged in and the token its forms must carry. Never the key it was made with. */
export interface ConsoleSession {
  /** The verified caller as the listener saw the key or token (its credential replaced by `[redacted]`). */
  readonly auth: AuthInfo;
  /** Carried by every form that changes something; compared in constant time. */
  readonly csrf: string;
  readonly expiresAt: number;
}

export interface SessionLimits {
  readonly ttlMs: number;
  readonly idleMs: number;
  readonly max: number;
}

interface Entry extends ConsoleSession {
  lastUsed: number;
}

/** The cookie value is 32 random bytes in base64url: anything else is not ours and is not looked up. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * The console's logins on this replica, in memory: random ids handed out as
 * cookies, kept by their SHA-256 (so a lookup's timing says nothing of an
 * id), bounded in count (a new login beyond `max` ends the least recently
 * used one), ending after `ttlMs`, after `idleMs` unused, or when the OAuth
 * token they were made with expires.
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, Entry>();

  constructor(
    private readonly limits: SessionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts a session; returns the id for the cookie (shown once, never kept). */
  create(auth: AuthInfo): { id: string; session: ConsoleSession } {
    const now = this.now();
    this.prune(now);
    while (this.sessions.size >= this.limits.max) {
      const leastRecent = this.sessions.keys().next().value;
      if (leastRecent === undefined) break;
      this.sessions.delete(leastRecent);
    }
    const id = randomBytes(32).toString('base64url');
    const tokenEnds = auth.expiresAt === undefined ? Infinity : auth.expiresAt * 1_000;
    const entry: Entry = {
      auth,
      csrf: randomBytes(32).toString('base64url'),
      expiresAt: Math.min(now + this.limits.ttlMs, tokenEnds),
      lastUsed: now,
    };
    this.sessions.set(key(id), entry);
    return { id, session: entry };
  }

  /** The live session a request's cookie names, refreshed as used; undefined otherwise. */
  of(req: IncomingMessage): ConsoleSession | undefined {
    const id = cookieOf(req, SESSION_COOKIE);
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const k = key(id);
    const entry = this.sessions.get(k);
    if (entry === undefined) return undefined;
    const now = this.now();
    if (now >= entry.expiresAt || now - entry.lastUsed >= this.limits.idleMs) {
      this.sessions.delete(k);
      return undefined;
    }
    entry.lastUsed = now;
    // Map order is the order of last use: the first key is the one to end when full.
    this.sessions.delete(k);
    this.sessions.set(k, entry);
    return entry;
  }

  /**
   * Takes in a session another replica started (found in the shared store by
   * the request's cookie), under the same bound as `create`; the id stays the cookie's.
   */
  adopt(req: IncomingMessage, session: ConsoleSession): ConsoleSession | undefined {
    const k = keyOf(req);
    const now = this.now();
    if (k === undefined || now >= session.expiresAt) return undefined;
    this.prune(now);
    while (this.sessions.size >= this.limits.max) {
      const leastRecent = this.sessions.keys().next().value;
      if (leastRecent === undefined) break;
      this.sessions.delete(leastRecent);
    }
    const entry: Entry = { auth: session.auth, csrf: session.csrf, expiresAt: session.expiresAt, lastUsed: now };
    this.sessions.set(k, entry);
    return entry;
  }

  /** Forgets a session by its key (another replica ended it). */
  forget(k: string): void {
    this.sessions.delete(k);
  }

  /** Ends the session a request's cookie names. */
  end(req: IncomingMessage): void {
    const id = cookieOf(req, SESSION_COOKIE);
    if (id !== undefined && SESSION_ID.test(id)) this.sessions.delete(key(id));
  }

  get size(): number {
    return this.sessions.size;
  }

  private prune(now: number): void {
    for (const [k, entry] of this.sessions)
      if (now >= entry.expiresAt || now - entry.lastUsed >= this.limits.idleMs) this.sessions.delete(k);
  }
}

/** The key a session is kept under, here and in a shared store: its id's SHA-256, so that its timing says nothing of the id. */
export function key(id: string): string {
  return digest(id).toString('base64url');
}

/** The key a request's cookie is kept under (its SHA-256), if it carries one of ours. */
export function keyOf(req: IncomingMessage): string | undefined {
  const id = cookieOf(req, SESSION_COOKIE);
  return id !== undefined && SESSION_ID.test(id) ? key(id) : undefined;
}

/** Whether a form's token is the session's, compared in constant time. */
export function csrfMatches(session: ConsoleSession, given: string | undefined): boolean {
  if (given === undefined) return false;
  return timingSafeEqual(digest(given), digest(session.csrf));
}

/** One cookie's value from the request's `Cookie` header (the first of that name); undefined when absent. */
export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined || header.length > 8_192) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    if (part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
