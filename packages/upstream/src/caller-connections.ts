import { Client } from '@modelcontextprotocol/client';
import type { CallerIdentity } from '@sluice/core';
import { messageOf } from '@sluice/core';
import type { Logger } from '@sluice/core';
import { safeJsonSchemaValidator } from '@sluice/core';
import { openTransport } from './connection.js';
import type { UpstreamAuthorizer } from './oauth/authorizer.js';
import type { ResolvedImportOptions } from './options.js';
import { CallRelay, UPSTREAM_CLIENT_CAPABILITIES, wireUpstreamClient } from './upstream-features.js';

interface Entry {
  readonly client: Promise<Client>;
}

/**
 * One connection per caller, for an upstream reached with each caller's own
 * grant (`token_exchange`): an upstream binds its sessions to the token
 * that opened them, so a caller's calls travel on a session opened with
 * that caller's token. Opened on the caller's first call; past `max`, the
 * least recently used are closed. The upstream's requests back (sampling,
 * elicitation, roots) and its log messages reach only a call of that same
 * caller: each connection has a relay of its own, and nothing it sends
 * outside a call is broadcast. A 2026-07-28 caller gets a connection of
 * its own speaking 2026-07-28, so that the upstream's questions reach it as
 * input-required rounds; an upstream that speaks only 2025-11-25 is
 * remembered, and those callers use the 2025-11-25 connection.
 */
export class CallerConnections {
  private readonly entries = new Map<string, Entry>();
  private readonly relays = new WeakMap<Client, CallRelay>();
  private closed = false;
  private legacyOnly = false;

  constructor(
    private readonly options: ResolvedImportOptions,
    private readonly version: string,
    private readonly logger: Logger,
    private readonly redact: (text: string) => string,
    private readonly max: number,
  ) {}

  /** The caller's connection, opened with `auth` if it is not open yet; rejects when it cannot be opened. */
  get(caller: CallerIdentity | undefined, auth: UpstreamAuthorizer, modern = false): Promise<Client> {
    const era = modern && !this.legacyOnly ? 'modern' : 'legacy';
    const key = JSON.stringify([caller?.subject, caller?.clientId, era]);
    const existing = this.entries.get(key);
    if (existing !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, existing);
      return existing.client;
    }
    if (this.closed) return Promise.reject(new Error('the server is closing'));
    const entry: Entry = {
      client: era === 'modern' ? this.openModern(key, caller, auth) : this.open(key, auth, false),
    };
    this.entries.set(key, entry);
    entry.client.catch(() => this.forget(key, entry));
    if (this.entries.size > this.max) {
      const oldest = this.entries.entries().next();
      if (oldest.done !== true) this.drop(oldest.value[0], oldest.value[1]);
    }
    return entry.client;
  }

  /** The relay of a caller's connection: a call on it enters here, so that the upstream's requests reach that call. */
  relayOf(client: Client): CallRelay | undefined {
    return this.relays.get(client);
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(entries.map(async (e) => (await e.client).close()));
  }

  /** A 2026-07-28 connection, or the 2025-11-25 one when the upstream turns out not to speak 2026-07-28. */
  private async openModern(key: string, caller: CallerIdentity | undefined, auth: UpstreamAuthorizer): Promise<Client> {
    const client = await this.open(key, auth, true);
    if (client.getProtocolEra() === 'modern') return client;
    this.legacyOnly = true;
    const entry = this.entries.get(key);
    if (entry !== undefined) this.entries.delete(key);
    await client.close().catch(() => {});
    return this.get(caller, auth);
  }

  private async open(key: string, auth: UpstreamAuthorizer, modern: boolean): Promise<Client> {
    const client = new Client(
      { name: 'sluice', version: this.version },
      {
        capabilities: UPSTREAM_CLIENT_CAPABILITIES,
        jsonSchemaValidator: safeJsonSchemaValidator(),
        // Input-required results go back to the caller, who answers them.
        ...(modern ? { versionNegotiation: { mode: 'auto' as const }, inputRequired: { autoFulfill: false } } : {}),
      },
    );
    const { name } = this.options;
    const opened = await openTransport(this.options.connection, {
      upstream: name,
      logger: this.logger,
      redact: this.redact,
      auth,
      ...(modern ? { negotiates: true } : {}),
    });
    client.onerror = (error) =>
      this.logger.debug(
        { event: 'upstream.transport_error', upstream: name, error: this.redact(messageOf(error)) },
        'upstream transport error',
      );
    const relay = new CallRelay();
    this.relays.set(client, relay);
    // No catalog: a caller's connection lists nothing for everyone and broadcasts nothing.
    wireUpstreamClient(client, {
      upstream: name,
      timeoutMs: this.options.timeoutMs,
      logger: this.logger,
      relay,
      catalog: undefined,
      redact: this.redact,
      featuresChanged: () => undefined,
    });
    try {
      await client.connect(opened.transport, { timeout: this.options.connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    client.onclose = () => {
      const entry = this.entries.get(key);
      if (entry !== undefined) void entry.client.then((c) => c === client && this.forget(key, entry));
    };
    return client;
  }

  private forget(key: string, entry: Entry): void {
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }

  private drop(key: string, entry: Entry): void {
    this.forget(key, entry);
    entry.client.then((c) => c.close()).catch(() => {});
  }
}
