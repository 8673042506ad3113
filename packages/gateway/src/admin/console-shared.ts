import type { IncomingMessage } from 'node:http';
import type { AuthInfo, Logger, MessageBus, Store } from '@sluice/core';
import { keyOf } from './console-sessions.js';
import type { ConsoleSession, ConsoleSessions, SessionLimits } from './console-sessions.js';

/** The bus channel on which a replica says that a login ended. */
const CHANNEL = 'console-logins';

/** A login as the store keeps it: by the SHA-256 of its cookie, never the cookie itself. */
const recordKey = (k: string): string => `console-login:${k}`;
/** A logout, kept as long as a login lives: a refresh that raced it takes its record back out. */
const endedKey = (k: string): string => `console-logout:${k}`;

/** How often a replica asks the store whether a login it holds a copy of still lives. */
export const LOGIN_CHECK_MS = 2_000;

/**
 * Console logins shared by every replica through the store: a login made on
 * one replica is written there, and another replica that meets its cookie
 * reads it once and keeps a copy. A login unused `idleMs` on every replica
 * expires in the store; a logout ends it everywhere. The store, not the bus,
 * has the last word: a copy is checked against it at most every
 * `LOGIN_CHECK_MS` while used (a logout whose bus message was lost, in a
 * flood or a reconnect, ends it there too), and a logout leaves a mark that a
 * refresh racing it reads after its write, and undoes it.
 */
export class SharedLogins {
  private readonly written = new Map<string, number>();
  private readonly checked = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly bus: MessageBus,
    private readonly local: ConsoleSessions,
    private readonly limits: SessionLimits,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    void bus
      .subscribe(CHANNEL, (k) => this.drop(k))
      .catch((error: unknown) =>
        logger.error({ event: 'admin.login_bus_failed', err: error }, 'cannot hear logouts made on other replicas'),
      );
  }

  /**
   * Writes a login to the store under its cookie's key: a new one at once, one
   * used here at most once a quarter of the idle time per replica, which keeps it alive everywhere.
   */
  async remember(k: string | undefined, session: ConsoleSession, fresh: boolean): Promise<void> {
    if (k === undefined) return;
    const now = this.now();
    if (!fresh && now - (this.written.get(k) ?? 0) < this.limits.idleMs / 4) return;
    const ttlMs = Math.min(this.limits.idleMs, session.expiresAt - now);
    if (ttlMs <= 0) return;
    this.written.delete(k);
    this.written.set(k, now);
    if (this.written.size > this.limits.max) this.written.delete(this.written.keys().next().value ?? '');
    try {
      // A refresh never makes a record anew: one gone ended (a logout, whatever the bus said of it).
      if (!fresh && (await this.store.get(recordKey(k))) === undefined) {
        this.drop(k);
        return;
      }
      await this.store.set(
        recordKey(k),
        { auth: session.auth, csrf: session.csrf, expiresAt: session.expiresAt },
        { ttlMs },
      );
      // Read after the write: a logout that came first left its mark, and the record goes again.
      if (!fresh && (await this.store.get(endedKey(k))) !== undefined) {
        this.drop(k);
        await this.store.delete(recordKey(k));
      }
    } catch (error) {
      this.logger.warn(
        { event: 'admin.login_unsaved', err: error },
        'cannot share a console login with the other replicas',
      );
    }
  }

  /** The login a request's cookie names that another replica made; one store read (two keys). */
  async lookup(req: IncomingMessage): Promise<ConsoleSession | undefined> {
    const k = keyOf(req);
    if (k === undefined) return undefined;
    let record: unknown;
    let ended: unknown;
    try {
      [record, ended] = await Promise.all([this.store.get(recordKey(k)), this.store.get(endedKey(k))]);
    } catch (error) {
      this.logger.warn({ event: 'admin.login_unreadable', err: error }, 'cannot read a console login from the store');
      return undefined;
    }
    // A record a refresh wrote back after the logout is not adopted.
    const session = ended === undefined ? asSession(record) : undefined;
    if (session === undefined) return undefined;
    this.noteChecked(k, this.now());
    return this.local.adopt(req, session);
  }

  /**
   * Whether the login a copy of which this replica holds still lives in the
   * store: asked at most every `LOGIN_CHECK_MS` per login. One that ended is
   * forgotten here; a store that cannot say refuses the request and keeps
   * the copy.
   */
  async live(k: string | undefined): Promise<boolean> {
    if (k === undefined) return true;
    const now = this.now();
    const last = this.checked.get(k);
    if (last !== undefined && now - last < LOGIN_CHECK_MS) return true;
    let live: boolean;
    try {
      const [record, ended] = await Promise.all([this.store.get(recordKey(k)), this.store.get(endedKey(k))]);
      live = asSession(record) !== undefined && ended === undefined;
    } catch (error) {
      this.logger.warn({ event: 'admin.login_unreadable', err: error }, 'cannot read a console login from the store');
      return false;
    }
    if (!live) {
      this.drop(k);
      return false;
    }
    this.noteChecked(k, now);
    return true;
  }

  private noteChecked(k: string, now: number): void {
    this.checked.delete(k);
    this.checked.set(k, now);
    if (this.checked.size > this.limits.max) this.checked.delete(this.checked.keys().next().value ?? '');
  }

  /**
   * Ends a login on every replica: its mark first, so that a refresh racing
   * the delete undoes itself. A cookie the store holds no login for leaves no
   * mark (any key may post a logout, with any cookie).
   */
  async end(req: IncomingMessage): Promise<void> {
    const k = keyOf(req);
    if (k === undefined) return;
    this.drop(k);
    if ((await this.store.get(recordKey(k))) === undefined) return;
    await this.store.set(endedKey(k), true, { ttlMs: this.limits.ttlMs });
    await this.store.delete(recordKey(k));
    await this.bus.publish(CHANNEL, k);
  }

  private drop(k: string): void {
    this.local.forget(k);
    this.written.delete(k);
    this.checked.delete(k);
  }
}

/** A record read back from the store, checked like any input. */
function asSession(value: unknown): ConsoleSession | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { auth, csrf, expiresAt } = value as { auth?: unknown; csrf?: unknown; expiresAt?: unknown };
  if (typeof csrf !== 'string' || typeof expiresAt !== 'number') return undefined;
  if (typeof auth !== 'object' || auth === null) return undefined;
  const { token, clientId, scopes } = auth as Partial<AuthInfo>;
  if (typeof token !== 'string' || typeof clientId !== 'string' || !Array.isArray(scopes)) return undefined;
  return { auth: auth as AuthInfo, csrf, expiresAt };
}
