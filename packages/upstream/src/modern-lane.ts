import { Client } from '@modelcontextprotocol/client';
import { messageOf } from '@sluice/core';
import type { Logger } from '@sluice/core';
import { safeJsonSchemaValidator } from '@sluice/core';
import { openTransport } from './connection.js';
import type { UpstreamAuthorizer } from './oauth/authorizer.js';
import { endOnExit } from './exit-guard.js';
import { connectBudgetMs } from './connect-budget.js';
import type { ResolvedImportOptions } from './options.js';
import { UPSTREAM_CLIENT_CAPABILITIES } from './upstream-features.js';

/**
 * Whether an upstream gets a second connection for 2026-07-28 callers: over
 * HTTP and in-process it costs a connection; over stdio it costs a second
 * process, which shares no state with the first, so only when asked for.
 * The legacy HTTP+SSE transport carries 2025-11-25 and older only.
 */
function laneAllowed(connection: ResolvedImportOptions['connection']): boolean {
  if (connection.type === 'stdio') return connection.modernProcess === true;
  return connection.type === 'http' || connection.type === 'in-process';
}

/**
 * A second connection to an upstream, speaking 2026-07-28, for the calls of
 * 2026-07-28 clients: their input-required round trips cross it (the main
 * connection speaks 2025-11-25, whose server-to-client requests these
 * clients cannot answer). Opened on first use; an upstream that speaks only
 * 2025-11-25 is remembered as such and its callers use the main connection.
 */
export class ModernLane {
  private client: Client | undefined;
  private opening: Promise<Client | undefined> | undefined;
  private legacyOnly: boolean;
  private closed = false;
  /** Forgets a lane's stdio child in the exit guard. */
  private forget: (() => void) | undefined;

  constructor(
    private readonly options: ResolvedImportOptions,
    private readonly version: string,
    private readonly logger: Logger,
    private readonly redact: (text: string) => string,
    private readonly auth?: UpstreamAuthorizer,
  ) {
    this.legacyOnly = !laneAllowed(options.connection);
  }

  /** A connection speaking 2026-07-28, or undefined: the upstream does not, or cannot be reached this way now. */
  get(): Promise<Client | undefined> {
    if (this.legacyOnly || this.closed) return Promise.resolve(undefined);
    if (this.client !== undefined) return Promise.resolve(this.client);
    this.opening ??= this.open().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
    this.forget?.();
  }

  private async open(): Promise<Client | undefined> {
    const client = new Client(
      { name: 'sluice', version: this.version },
      {
        capabilities: UPSTREAM_CLIENT_CAPABILITIES,
        jsonSchemaValidator: safeJsonSchemaValidator(),
        versionNegotiation: { mode: 'auto' },
        // Input-required results go back to Sluice's own client, which answers them.
        inputRequired: { autoFulfill: false },
      },
    );
    try {
      const opened = await openTransport(this.options.connection, {
        upstream: this.options.name,
        logger: this.logger,
        redact: this.redact,
        // Over stdio, the era probe needs the SDK's own transport (it probes on a disposable sibling).
        negotiates: true,
        auth: this.auth,
      });
      if (this.options.connection.type === 'stdio') {
        this.forget?.();
        this.forget = endOnExit(() => opened.pid());
      }
      await client.connect(opened.transport, { timeout: connectBudgetMs(this.options) });
    } catch (error) {
      this.logger.debug(
        { event: 'upstream.modern_lane_failed', upstream: this.options.name, error: this.redact(messageOf(error)) },
        'the 2026-07-28 connection to an upstream could not be opened',
      );
      await client.close().catch(() => {});
      return undefined;
    }
    if (this.closed || client.getProtocolEra() !== 'modern') {
      this.legacyOnly = !this.closed;
      await client.close().catch(() => {});
      return undefined;
    }
    client.onclose = () => {
      if (this.client === client) this.client = undefined;
    };
    this.client = client;
    return client;
  }
}
