import type { IncomingMessage } from 'node:http';
import type { AuthInfo, Logger, MessageBus, Store } from '@sluice/core';
import { keyOf } from './console-sessions.js';
import type { ConsoleSession, ConsoleSessions, SessionLimits } from './console-sessions.js';

/** The bus channel on which a replica says that a login ended. */
const CHANNEL = 'console-logins';

/** A login as the store keeps it: by the SHA-256 of its cookie, never the cookie itself. */
const recordKey = (k: string): string => `console-login:${k}`;

/**
 * Console logins shared by every replica through the store: a login made on
 * one replica is written there, and another replica that meets its cookie
 * reads it once and keeps a copy. A login unused `idleMs` on every replica
 * expires in the store; a logout ends it everywhere.
 */
export class SharedLogins {
  private readonly written = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly bus: MessageBus,
    private readonly local: ConsoleSessions,
    private readonly limits: SessionLimits,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    void bus
      .subscribe(CHANNEL, (k) => {
        this.local.forget(k);
        this.written.delete(k);
      })
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
      await this.store.set(
        recordKey(k),
        { auth: session.auth, csrf: session.csrf, expiresAt: session.expiresAt },
        { ttlMs },
      );
    } catch (error) {
      this.logger.warn(
        { event: 'admin.login_unsaved', err: error },
        'cannot share a console login with the other replicas',
      );
    }
  }

  /** The login a request's cookie names that another replica made; one store read. */
  async lookup(req: IncomingMessage): Promise<ConsoleSession | undefined> {
    const k = keyOf(req);
    if (k === undefined) return undefined;
    let record: unknown;
    try {
      record = await this.store.get(recordKey(k));
    } catch (error) {
      this.logger.warn({ event: 'admin.login_unreadable', err: error }, 'cannot read a console login from the store');
      return undefined;
    }
    const session = asSession(record);
    return session && this.local.adopt(req, session);
  }

  /** Ends a login on every replica. */
  async end(req: IncomingMessage): Promise<void> {
    const k = keyOf(req);
    if (k === undefined) return;
    this.written.delete(k);
    await this.store.delete(recordKey(k));
    await this.bus.publish(CHANNEL, k);
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
