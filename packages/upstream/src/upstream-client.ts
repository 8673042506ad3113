import { Client } from '@modelcontextprotocol/client';
import type { Clock, ClockTimer } from '@sluice/core';
import { messageOf } from '@sluice/core';
import type { Logger } from '@sluice/core';
import type { Redactions } from '@sluice/core';
import type { Tool } from '@sluice/core';
import type { ImportResult } from '@sluice/core';
import type { ToolTable } from '@sluice/core/internal';
import type { ImportSource } from '@sluice/core';
import { backoffDelay } from './backoff.js';
import { describeTarget, openTransport, secretsOf } from './connection.js';
import type { ToolSelection } from './discovery.js';
import { createSelection, planImport } from './discovery.js';
import { createRedactor } from './errors.js';
import { endOnExit } from './exit-guard.js';
import { HealthTracker } from './health.js';
import { StderrTail } from './stderr-tail.js';
import { ModernLane } from './modern-lane.js';
import { CallerConnections } from './caller-connections.js';
import type { UpstreamAuthorizer, UpstreamAuthorizers } from './oauth/authorizer.js';
import { createAuthorizers } from './oauth/authorizer.js';
import type { PerUserContext } from './oauth/per-user.js';
import type { CallerIdentity } from '@sluice/core';
import { RoundStateSeal } from './round-state.js';
import type { UpstreamStatus } from './health.js';
import type { ResolvedImportOptions } from './options.js';
import type { UpstreamLink } from './proxy.js';
import { proxyExecutor } from './proxy.js';
import { safeJsonSchemaValidator } from '@sluice/core';
import type { FeatureCatalog, FeatureList } from './features/catalog.js';
import type { ServerContext } from '@sluice/core';
import type { SkippedTool } from '@sluice/core';
import { connectBudgetMs, handshakeError } from './connect-budget.js';
import { MAX_ITEM_TEXT_CHARS, MAX_LIST_PAGES, cutReason, listReader } from './bounded-list.js';
import type { ListReader } from './bounded-list.js';
import {
  CallRelay,
  MAX_FEATURE_ITEMS,
  UPSTREAM_CLIENT_CAPABILITIES,
  listFeatures,
  wireUpstreamClient,
} from './upstream-features.js';

/** How many removed tools an `upstream.tools` line names (`removedCount` counts them all). */
const REMOVED_NAMED = 20;

/** What an upstream needs from the Sluice server that imports it. */
export interface UpstreamHost {
  readonly logger: Logger;
  readonly services: { readonly clock: Clock; readonly redactions?: Redactions };
  /** Sluice's version, sent upstream as the client's version. */
  readonly version: string;
  /** Where the upstream's tools are admitted and removed. */
  readonly table: Pick<ToolTable, 'admit' | 'remove'>;
  /** Where the upstream's resources, templates and prompts go; see `features/`. */
  readonly features?: FeatureCatalog;
  /** Seals upstream `requestState` between rounds; the server's, so that its pipeline can read what it sealed. */
  readonly roundSeal?: RoundStateSeal;
  /** The credential vault and consent flows, for `per_user` upstreams; absent without a vault. */
  readonly perUser?: PerUserContext | undefined;
}

/**
 * One imported upstream: its connection (reconnected with backoff when it
 * fails), its health, and the tools Sluice exposes for it, kept in step
 * with the upstream's `tools/list` whenever it announces a change.
 */
export class UpstreamClient implements UpstreamLink {
  readonly name: string;
  readonly timeoutMs: number;
  readonly redact: (text: string) => string;
  private readonly health: HealthTracker;
  private readonly stderrTail: StderrTail;
  private readonly selection: ToolSelection;
  private readonly logger: Logger;
  /** Connected; its tools are (being) exposed. */
  private client: Client | undefined;
  /** Being connected, so that close() can stop it. */
  private attempting: Client | undefined;
  private exposed: readonly string[] = [];
  private failures = 0;
  private timer: ClockTimer | undefined;
  private retryAt: number | undefined;
  private closed = false;
  // Connecting and re-listing run one at a time, in order.
  private queue: Promise<unknown> = Promise.resolve();
  private refreshQueued = false;
  /** The lists an upstream announced as changed since its features were last listed. */
  private readonly announced = new Set<FeatureList>();
  private readonly relay = new CallRelay();
  private readonly lane: ModernLane;
  private readonly auth: UpstreamAuthorizer | undefined;
  private readonly authorizers: UpstreamAuthorizers | undefined;
  private readonly callers: CallerConnections | undefined;
  readonly roundSeal: RoundStateSeal;

  constructor(
    private readonly host: UpstreamHost,
    private readonly options: ResolvedImportOptions,
  ) {
    this.name = options.name;
    this.timeoutMs = options.timeoutMs;
    this.redact = createRedactor(
      [...secretsOf(options.connection, options.auth), ...(options.redact ?? [])],
      host.services.redactions,
    );
    this.logger = host.logger;
    this.stderrTail = new StderrTail();
    this.health = new HealthTracker(options.name, host.logger, () => host.services.clock.now());
    this.selection = createSelection(options);
    const connection = options.connection;
    const url = connection.type === 'http' || connection.type === 'sse' ? connection.url : undefined;
    // One authorizer for both lanes, so that they share a token.
    this.authorizers = createAuthorizers(options.name, url, options.auth, host.services.clock, host.perUser);
    this.auth = this.authorizers?.connection;
    const auth = options.auth;
    this.callers =
      auth !== undefined && auth.type !== 'client_credentials'
        ? new CallerConnections(options, host.version, host.logger, this.redact, auth.maxCallers)
        : undefined;
    this.lane = new ModernLane(options, host.version, host.logger, this.redact, this.auth);
    this.roundSeal = host.roundSeal ?? new RoundStateSeal();
  }

  /** Makes the first connection attempt. If it fails, says why in `skipped` and keeps trying in the background. */
  async start(): Promise<ImportResult> {
    try {
      return await this.serially(() => this.connect());
    } catch (error) {
      const reason = this.redact(messageOf(error));
      if (this.closed) return { imported: [], skipped: [] };
      this.down(reason);
      const skipped = {
        name: this.name,
        reason: `Upstream "${this.name}" could not be reached (${reason}); retrying in the background`,
        by: 'core',
      };
      return { imported: [], skipped: [skipped] };
    }
  }

  connected(): Client | undefined {
    return this.client;
  }

  retryInMs(): number | undefined {
    return this.retryAt === undefined ? undefined : Math.max(0, this.retryAt - this.host.services.clock.now());
  }

  modernLane(): Promise<Client | undefined> {
    return this.lane.get();
  }

  callerClient(caller: CallerIdentity | undefined, modern?: boolean): Promise<Client> | undefined {
    const auth = this.authorizers?.forCaller?.(caller);
    const callers = this.callers;
    if (auth === undefined || callers === undefined) return undefined;
    // The caller's grant first: a caller without one is told so before any connection is opened.
    return auth.authorization().then(() => callers.get(caller, auth, modern));
  }

  enterCall(mcp: ServerContext | undefined, caller: string, client?: Client): () => void {
    const own = client === undefined ? undefined : this.callers?.relayOf(client);
    return (own ?? this.relay).enter(mcp, caller);
  }

  callSucceeded(): void {
    if (this.health.state === 'degraded') this.health.set('healthy');
  }

  callTimedOut(): void {
    if (this.health.state === 'healthy')
      this.health.set('degraded', `a call got no answer within ${this.timeoutMs} ms`);
  }

  connectionFailed(client: Client, reason: string): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    this.down(reason);
    client.close().catch(() => {});
  }

  status(): UpstreamStatus {
    return {
      name: this.name,
      transport: this.options.connection.type,
      target: describeTarget(this.options.connection),
      health: this.health.state,
      since: this.health.since,
      lastError: this.health.lastError,
      tools: [...this.exposed],
      nextRetryAt: this.health.state === 'down' ? this.retryAt : undefined,
    };
  }

  /** Stops reconnecting and closes the connection (a stdio child is ended, then killed). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) this.host.services.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const clients = [this.client, this.attempting].filter((c): c is Client => c !== undefined);
    this.client = undefined;
    await Promise.allSettled([...clients.map((c) => c.close()), this.lane.close(), this.callers?.close()]);
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }

  private async connect(): Promise<ImportResult> {
    if (this.closed) throw new Error('the server is closing');
    // Upstream schemas are untrusted: their patterns are matched in linear time.
    const client = new Client(
      { name: 'sluice', version: this.host.version },
      {
        capabilities: UPSTREAM_CLIENT_CAPABILITIES,
        jsonSchemaValidator: safeJsonSchemaValidator(),
        listMaxPages: MAX_LIST_PAGES,
      },
    );
    this.attempting = client;
    let forget: (() => void) | undefined;
    try {
      const opened = await openTransport(this.options.connection, {
        upstream: this.name,
        logger: this.logger,
        redact: this.redact,
        stderrTail: this.stderrTail,
        auth: this.auth,
      });
      // A stdio child must not outlive this process, even one that exits without closing the server.
      forget = connectionIsStdio(this.options) ? endOnExit(() => opened.pid()) : undefined;
      client.onclose = () => {
        forget?.();
        this.connectionFailed(client, 'the connection closed');
      };
      client.onerror = (error) =>
        this.logger.debug(
          { event: 'upstream.transport_error', upstream: this.name, error: this.redact(messageOf(error)) },
          'upstream transport error',
        );
      client.setNotificationHandler('notifications/tools/list_changed', () => this.refresh(client));
      wireUpstreamClient(client, {
        upstream: this.name,
        timeoutMs: this.timeoutMs,
        logger: this.logger,
        relay: this.relay,
        catalog: this.host.features,
        redact: this.redact,
        featuresChanged: (kind) => this.refreshFeatures(client, kind),
      });
      await client.connect(opened.transport, { timeout: connectBudgetMs(this.options) }).catch((error: unknown) => {
        throw handshakeError(error, this.options);
      });
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may run during the await
      if (this.closed) throw new Error('the server is closing');
      this.client = client;
      const result = await this.sync(client);
      this.failures = 0;
      this.retryAt = undefined;
      this.health.set('healthy');
      return result;
    } catch (error) {
      if (this.client === client) this.client = undefined;
      await client.close().catch(() => {});
      forget?.();
      throw error;
    } finally {
      if (this.attempting === client) this.attempting = undefined;
    }
  }

  /** Re-lists after `notifications/tools/list_changed`; notifications that arrive meanwhile fold into one more run. */
  private refresh(client: Client): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    void this.serially(async () => {
      this.refreshQueued = false;
      if (this.closed || this.client !== client) return;
      try {
        await this.sync(client);
        this.callSucceeded();
      } catch (error) {
        this.health.set('degraded', `re-listing tools failed: ${this.redact(messageOf(error))}`);
      }
    });
  }

  /** Re-lists resources and prompts after their `list_changed`; notifications that arrive meanwhile fold into one more run. */
  private refreshFeatures(client: Client, kind: FeatureList): void {
    const queued = this.announced.size > 0;
    this.announced.add(kind);
    if (queued) return;
    void this.serially(async () => {
      const announced = [...this.announced];
      this.announced.clear();
      if (this.closed || this.client !== client) return;
      try {
        await this.syncFeatures(client, announced);
      } catch (error) {
        this.health.set('degraded', `re-listing resources and prompts failed: ${this.redact(messageOf(error))}`);
      }
    });
  }

  /** Lists resources, templates and prompts into the catalog; returns what it refused (conflicts). */
  private async syncFeatures(client: Client, announced: readonly FeatureList[] = []): Promise<SkippedTool[]> {
    const catalog = this.host.features;
    if (catalog === undefined) return [];
    const cut: SkippedTool[] = [];
    const snapshot = await listFeatures(
      client,
      this.listReader(client, cut),
      (name) => this.selection.exposedName(name),
      this.source(),
      (kind, id) => this.selection.featureExclusion(kind, id),
      (uri) => this.selection.resourceDenial(uri),
    );
    const skipped = await catalog.update(this, snapshot, announced);
    return [...skipped, ...cut];
  }

  /**
   * Reads the upstream's lists within their bounds; a list left incomplete is
   * logged and put in `cut` (reported in `skipped`), and cut descriptions and
   * titles are logged.
   */
  private listReader(client: Client, cut: SkippedTool[]): ListReader {
    return listReader(client, { timeout: connectBudgetMs(this.options), maxItems: MAX_FEATURE_ITEMS }, (lost) => {
      const fields = { upstream: this.name, list: lost.list, kept: lost.kept };
      if (lost.cut !== undefined) {
        const reason = cutReason(this.name, lost.list, lost.cut, lost.kept);
        cut.push({ name: this.name, reason, by: 'core' });
        this.logger.warn({ event: 'upstream.list_cut', ...fields, bound: lost.cut.by, max: lost.cut.max }, reason);
      }
      if (lost.shortened > 0)
        this.logger.warn(
          { event: 'upstream.texts_cut', ...fields, items: lost.shortened, max: MAX_ITEM_TEXT_CHARS },
          `upstream "${this.name}" lists ${lost.shortened} ${lost.list} whose description or title is over ${MAX_ITEM_TEXT_CHARS} characters; they are cut there`,
        );
    });
  }

  /** Lists the upstream's tools, admits them through the `import` hook, and drops what it no longer offers. */
  private async sync(client: Client): Promise<ImportResult> {
    const cut: SkippedTool[] = [];
    const listed = await listTools(client, this.listReader(client, cut));
    const plan = planImport(listed, this.selection, (tool) => proxyExecutor(this, tool));
    // The batch names the upstream; each tool's own source names its original tool.
    const source = this.source();
    // An empty listing is admitted too: what the import hook and the core kept of the upstream's last one goes.
    const admitted = await this.host.table.admit(source, plan.drafts);
    const kept = new Set(admitted.imported);
    const removed = this.exposed.filter((name) => !kept.has(name));
    if (removed.length > 0) this.host.table.remove(removed);
    this.exposed = admitted.imported;
    const skipped = [...cut, ...plan.skipped, ...admitted.skipped, ...(await this.syncFeatures(client))];
    this.logger.info(
      {
        event: 'upstream.tools',
        upstream: this.name,
        imported: admitted.imported.length,
        skipped: skipped.length,
        // A renaming upstream drops its whole list at each listing: the line names a few, and counts them all.
        removed: removed.slice(0, REMOVED_NAMED),
        removedCount: removed.length,
      },
      `upstream "${this.name}" exposes ${admitted.imported.length} tools`,
    );
    return { imported: admitted.imported, skipped };
  }

  /** The upstream as import taps see it. */
  private source(): ImportSource {
    return {
      kind: 'upstream',
      upstream: this.name,
      trusted: this.options.trusted,
      connection: this.selection.connection,
    };
  }

  private down(reason: string): void {
    this.health.set('down', reason);
    const lines = this.stderrTail.take().map(this.redact);
    if (lines.length > 0)
      this.logger.warn(
        { event: 'upstream.stderr_tail', upstream: this.name, lines },
        `upstream "${this.name}" failed; its last stderr lines:\n${lines.map((line) => `  | ${line}`).join('\n')}`,
      );
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer !== undefined) return;
    const delay = backoffDelay(this.failures++, this.options.retry);
    this.retryAt = this.host.services.clock.now() + delay;
    this.timer = this.host.services.clock.setTimeout(() => {
      this.timer = undefined;
      void this.reconnect();
    }, delay);
    // A reconnection timer never keeps the process alive.
    this.timer.unref?.();
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return;
    try {
      await this.serially(() => this.connect());
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may run during the await
      if (this.closed) return;
      const reason = this.redact(messageOf(error));
      this.logger.debug(
        { event: 'upstream.reconnect_failed', upstream: this.name, attempt: this.failures, error: reason },
        'reconnection failed',
      );
      this.down(reason);
    }
  }
}

async function listTools(client: Client, read: ListReader): Promise<Tool[]> {
  // An upstream without the tools capability is not asked: it need not answer tools/list at all.
  if (!client.getServerCapabilities()?.tools) return [];
  return read('tools', 'tools/list', (page) => page.tools);
}

function connectionIsStdio(options: ResolvedImportOptions): boolean {
  return options.connection.type === 'stdio';
}
