import type { CodeModePlugin } from '@sluice/plugin-code-mode';
import { createServer as createHttpServer } from 'node:http';
import type { Server as HttpServer, RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore, createServer } from '@sluice/core';
import type { CredentialVault } from '@sluice/upstream';
import { HttpLimits } from '@sluice/http';
import '@sluice/audit';
import '@sluice/stdio';
import type {
  HttpListener,
  ImportResult,
  ListenOptions,
  Logger,
  Plugin,
  SluiceServer,
  StdioHandle,
  Store,
} from '@sluice/core';
import { PLUGIN_NAME as RISK_PLUGIN } from '@sluice/plugin-risk';
import type { RiskPlugin } from '@sluice/plugin-risk';
import { GatewayMetrics } from './call-metrics.js';
import type { GatewayConfig, GatewayConfigInput } from './config-schema.js';
import { adminApiRoutes } from './admin/api.js';
import type { AdminContext } from './admin/admin-surface.js';
import { CONSOLE_PATH, consoleRoutes } from './admin/console.js';
import { ApprovalWebhook } from './admin/webhook.js';
import { ConsoleLogin } from './admin/console-login.js';
import { LedgerView, pluginAccess } from './admin/ledger-view.js';
import { LiveRates } from './admin/snapshot.js';
import type { SkippedView } from './admin/snapshot.js';
import { healthRoutes } from './health.js';
import type { HealthState } from './health.js';
import { createGatewayLogger } from './log-output.js';
import { metricsRoute, scopedScrape } from './metrics-route.js';
import { startupSummary } from './startup-summary.js';
import type { ParseConfigOptions } from './parse-config.js';
import { parseGatewayConfig } from './parse-config.js';
import { pluginsFromConfig } from './plugins.js';
import { probePort } from './port-probe.js';
import { storeOf, vaultOf } from './store.js';
import { telemetry } from './telemetry.js';
import '@sluice/upstream';

export interface GatewayOptions extends ParseConfigOptions {
  /** Default: JSON lines on stderr at the config's `logLevel`. */
  readonly logger?: Logger;
  /**
   * Further plugin instances, applied after the config's built-in ones (for
   * `plugins.custom`, see `loadCustomPlugins()`); stages order their taps as
   * for any plugin.
   */
  readonly plugins?: readonly Plugin[];
}

/** What one upstream's import came to. */
export interface UpstreamImport extends ImportResult {
  readonly upstream: string;
}

export interface GatewayListeners {
  readonly http?: HttpListener;
  readonly stdio?: StdioHandle;
  /** The metrics endpoint, when `telemetry.metricsListen` gives it a listener of its own. */
  readonly metrics?: URL;
}

/**
 * A Sluice server built from a gateway config: the configured plugins, the
 * gateway's telemetry, the store; `start()` imports the upstreams and
 * listens.
 */
export class Gateway {
  readonly config: GatewayConfig;
  readonly server: SluiceServer;
  readonly logger: Logger;
  /** Undefined when `telemetry.metricsPath` is false or nothing listens on HTTP. */
  readonly metrics: GatewayMetrics | undefined;
  private readonly store: Store | undefined;
  /** Sealed upstream grants (`per_user`); undefined without `credentialVault` in the config. */
  readonly credentialVault: CredentialVault | undefined;
  private readonly pluginNames: readonly string[];
  private readonly riskPlugin: RiskPlugin | undefined;
  private skipped: SkippedView[] = [];
  private closing: Promise<void> | undefined;
  private listening = false;
  private metricsServer: HttpServer | undefined;
  private httpListener: HttpListener | undefined;

  constructor(input: GatewayConfigInput | GatewayConfig, options: GatewayOptions = {}) {
    this.config = parseGatewayConfig(input, options);
    const config = this.config;
    this.logger = options.logger ?? defaultLogger(config);
    // Metrics are served by the HTTP listener; without one there is nobody to scrape them.
    this.metrics = config.telemetry.metricsPath === false || !config.listen.http ? undefined : new GatewayMetrics();
    const plugins = [...pluginsFromConfig(config), ...(options.plugins ?? [])];
    const watchAdmission = config.plugins.concurrency !== undefined && config.plugins.concurrency.mode !== 'off';
    plugins.push(
      telemetry({
        tracing: config.telemetry.tracing,
        watchAdmission,
        ...(this.metrics ? { metrics: this.metrics } : {}),
      }),
    );
    this.pluginNames = plugins.map((plugin) => plugin.name);
    this.riskPlugin = config.plugins.risk ? (plugins.find((p) => p.name === RISK_PLUGIN) as RiskPlugin) : undefined;
    // A vault needs the store's credential records, so the gateway builds even the memory store itself then.
    this.store = storeOf(config, this.logger) ?? (config.credentialVault ? new MemoryStore() : undefined);
    try {
      this.credentialVault = config.credentialVault && vaultOf(this.store, config.credentialVault);
      this.server = createServer({
        name: config.name,
        version: config.version,
        plugins,
        logger: this.logger,
        drainTimeoutMs: config.drainTimeoutMs,
        audit: config.audit,
        ...(config.instructions === undefined ? {} : { instructions: config.instructions }),
        ...(config.roundStateSecret === undefined ? {} : { roundStateSecret: config.roundStateSecret }),
        ...(this.store ? { store: this.store } : {}),
        ...(this.credentialVault ? { credentialVault: this.credentialVault } : {}),
      });
    } catch (error) {
      void this.store?.close();
      throw error;
    }
    this.metrics?.watchUpstreams(() => this.server.upstreams());
    this.metrics?.watchShares(() => this.httpListener?.shares());
    this.metrics?.watchGuesses(() => this.httpListener?.guesses());
    const scripts = plugins.find(isCodeMode);
    if (scripts) this.metrics?.watchScripts(() => scripts.scripts());
  }

  /**
   * Imports every upstream, one after another so that name collisions and
   * the risk plugin's shadowing rules resolve in config order. An upstream
   * that cannot be reached is reported (and retried in the background); the
   * others go on.
   */
  async importUpstreams(): Promise<UpstreamImport[]> {
    const results: UpstreamImport[] = [];
    for (const upstream of this.config.upstreams) {
      const result = await this.server.import(upstream);
      const record = {
        event: 'gateway.upstream',
        upstream: upstream.name,
        imported: result.imported.length,
        skipped: result.skipped.length,
      };
      // The start-up summary lists every upstream at info; this line is for a closer look.
      this.logger.debug(
        record,
        `upstream "${upstream.name}": ${result.imported.length} tools imported, ${result.skipped.length} skipped`,
      );
      results.push({ upstream: upstream.name, ...result });
    }
    this.skipped = results.flatMap(({ upstream, skipped }) => skipped.map((tool) => ({ ...tool, upstream })));
    return results;
  }

  /** Listens where the config says: Streamable HTTP (with `/metrics` beside it) and/or stdio. */
  async listen(): Promise<GatewayListeners> {
    const { http, stdio } = this.config.listen;
    const { metricsPath, metricsListen, metricsScopes } = this.config.telemetry;
    const scrape = this.metrics && metricsPath !== false ? metricsRoute(this.metrics) : undefined;
    const health = this.config.health.enabled ? healthRoutes(() => this.health(), this.config.health.ready) : {};
    const admin = this.config.admin;
    const context = admin ? this.adminContext(admin.scopes) : undefined;
    // The console authenticates its own requests (the listener's header, or a login's session cookie).
    const consolePages = context && admin?.console ? consoleRoutes(context, this.consoleLogin(admin)) : {};
    const webhook = context && admin?.webhook ? this.approvalWebhook(admin.webhook, context) : undefined;
    const routes = {
      ...(webhook ? webhook.routes() : {}),
      ...health,
      ...(scrape && metricsPath !== false && !metricsListen
        ? { [metricsPath]: scopedScrape(scrape, [metricsScopes, ...(admin ? [admin.scopes] : [])]) }
        : {}),
      ...(context ? adminApiRoutes(context) : {}),
      ...consolePages,
    };
    const metricsUrl =
      scrape && metricsPath !== false && metricsListen
        ? await this.listenMetrics(metricsListen, metricsPath, scrape)
        : undefined;
    const httpListener = http
      ? await this.server.listen({
          ...listenLimits(http),
          routes,
          publicRoutes: [
            ...Object.keys(health),
            ...Object.keys(consolePages),
            // An answer link is its own credential (sealed, one question, one decision, expiring).
            ...(webhook ? Object.keys(webhook.routes()) : []),
          ],
        })
      : undefined;
    this.httpListener = httpListener;
    this.listening = true;
    const stdioHandle = stdio ? await this.server.serveStdio() : undefined;
    return {
      ...(httpListener ? { http: httpListener } : {}),
      ...(stdioHandle ? { stdio: stdioHandle } : {}),
      ...(metricsUrl ? { metrics: metricsUrl } : {}),
    };
  }

  /** A listener that serves only the metrics path, for a scraper on an internal network. */
  private async listenMetrics(
    where: { host: string; port: number },
    path: string,
    scrape: RequestListener,
  ): Promise<URL> {
    const allowedHosts = metricsHosts(where.host);
    const headersTimeout = HttpLimits.HEADERS_TIMEOUT_MS;
    const limits = {
      headersTimeout,
      requestTimeout: HttpLimits.REQUEST_TIMEOUT_MS,
      keepAliveTimeout: HttpLimits.KEEP_ALIVE_TIMEOUT_MS,
      // Often enough that the timeouts above hold (Node's default checks every 30 s).
      connectionsCheckingInterval: 1_000,
    };
    const server = createHttpServer(limits, (req, res) => {
      if (allowedHosts && !allowedHosts.has(hostnameOf(req.headers.host))) {
        // A DNS-rebinding page names its own host: on a loopback bind only loopback names are served.
        res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('Forbidden: Host not allowed\n');
        return;
      }
      if (new URL(req.url ?? '/', 'http://metrics.invalid').pathname === path) {
        scrape(req, res);
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`Not found: metrics are at ${path}\n`);
    });
    server.maxConnections = HttpLimits.MAX_CONNECTIONS;
    server.on('clientError', (_error, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(where.port, where.host, () => resolve());
    });
    this.metricsServer = server;
    const { address, port, family } = server.address() as AddressInfo;
    const url = new URL(`http://${family === 'IPv6' ? `[${address}]` : address}:${port}${path}`);
    this.logger.info({ event: 'gateway.metrics_listening', url: url.href }, `metrics at ${url.href}`);
    return url;
  }

  /**
   * Imports the upstreams, then listens; logs one summary of what it serves.
   * The listen addresses are probed first, so that a taken port fails the
   * start before any upstream is spawned.
   */
  async start(): Promise<GatewayListeners> {
    await this.probeListenAddresses();
    const imports = await this.importUpstreams();
    const listeners = await this.listen();
    const summary = startupSummary({
      url: listeners.http?.url.href,
      stdio: listeners.stdio !== undefined,
      tools: this.server.tools().length,
      imports,
      upstreams: this.server.upstreams(),
      plugins: this.pluginNames,
    });
    this.logger.info(summary.fields, summary.message);
    return listeners;
  }

  private async probeListenAddresses(): Promise<void> {
    const { http } = this.config.listen;
    // The bind's own error: the CLI names the HTTP address from its code.
    if (http) await probePort(http.host, http.port);
    const { metricsPath, metricsListen } = this.config.telemetry;
    if (this.metrics && metricsPath !== false && metricsListen) {
      const { host, port } = metricsListen;
      await probePort(host, port).catch((error: unknown) => {
        const code = (error as NodeJS.ErrnoException | null)?.code;
        throw new Error(
          code === 'EADDRINUSE'
            ? `the metrics address ${host}:${port} (telemetry.metricsListen) is already in use`
            : `cannot listen for metrics on ${host}:${port} (telemetry.metricsListen): ${String(code ?? error)}`,
          { cause: error },
        );
      });
    }
  }

  /** The console's login, checking keys and tokens through the listener once it listens. */
  private consoleLogin(admin: NonNullable<GatewayConfig['admin']>): ConsoleLogin {
    const auth = this.config.listen.http?.auth;
    return new ConsoleLogin(CONSOLE_PATH, {
      required: auth !== undefined && auth.type !== 'none',
      authenticate: (authorization, address) =>
        this.httpListener?.authenticate(authorization, address) ?? Promise.resolve(false),
      passesGuessThrottle: (authorization) => this.httpListener?.passesGuessThrottle(authorization) ?? false,
      scopes: admin.scopes,
      session: admin.session,
      logger: this.logger,
      ...(this.store ? { store: this.store } : {}),
    });
  }

  /** Posts each new operator question to the configured receiver, with answer links back to this listener. */
  private approvalWebhook(
    settings: NonNullable<NonNullable<GatewayConfig['admin']>['webhook']>,
    context: AdminContext,
  ): ApprovalWebhook {
    const waiting = async (id: string) => (await this.riskPlugin?.approvalWaiting(id)) ?? false;
    const webhook = new ApprovalWebhook(settings, () => this.httpListener?.url, context.answer, waiting, this.logger);
    this.riskPlugin?.onApprovalEvent((event) => webhook.notify(event));
    return webhook;
  }

  /** What the admin API and the console read and act on. */
  private adminContext(scopes: readonly string[]): AdminContext {
    const upstreams = this.config.upstreams.map((u) => u.name);
    let view: LedgerView | undefined;
    return {
      server: this.server,
      config: this.config,
      metrics: this.metrics,
      skipped: () => this.skipped,
      scopes,
      logger: this.logger,
      audit: this.server.services.audit,
      live: new LiveRates(),
      credentials: () => this.credentialVault,
      approvals: async () =>
        this.config.plugins.risk?.mode === 'off' || this.riskPlugin === undefined
          ? []
          : await this.riskPlugin.pendingApprovals(),
      answer: async (id, answer) =>
        this.config.plugins.risk?.mode === 'off' || this.riskPlugin === undefined
          ? { ok: false, why: 'unknown' }
          : await this.riskPlugin.answerApproval(id, answer),
      ledger: () => {
        if (view) return view;
        const access = this.config.plugins.risk?.mode === 'off' ? undefined : pluginAccess(this.riskPlugin);
        view =
          access &&
          new LedgerView(
            access,
            () => upstreams,
            () => this.server.tools(),
          );
        return view;
      },
    };
  }

  /** What `/readyz` judges: draining, listening, the upstreams' health. */
  health(): HealthState {
    return { draining: this.closing !== undefined, listening: this.listening, upstreams: this.server.upstreams() };
  }

  /**
   * Answers /readyz with 503 and keeps serving for `drainDelayMs`, then stops taking calls, lets running ones
   * finish (up to `drainTimeoutMs`), closes listeners, upstreams and the store.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // /readyz says 503 from now on; new requests are still served until the balancer has seen it.
      const delay = this.config.drainDelayMs;
      if (delay > 0) {
        this.logger.info(
          { event: 'gateway.drain_delay', delayMs: delay },
          'unready: serving until the balancer notices',
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
      await this.server.close();
      const metrics = this.metricsServer;
      if (metrics) {
        metrics.closeAllConnections();
        await new Promise<void>((resolve) => metrics.close(() => resolve()));
      }
      await this.store?.close();
    })();
    return this.closing;
  }
}

/** Builds the gateway a config describes. Bad config throws `CONFIG_INVALID` naming each bad field. */
/** The code-mode plugin among a gateway's plugins, whose script shares `/metrics` reports. */
function isCodeMode(plugin: Plugin): plugin is CodeModePlugin {
  return plugin.name === 'code-mode' && typeof (plugin as Partial<CodeModePlugin>).scripts === 'function';
}

export function createGateway(config: GatewayConfigInput | GatewayConfig, options: GatewayOptions = {}): Gateway {
  return new Gateway(config, options);
}

/** The listener options a config's `listen.http` gives: the fields share their names, except unset ones. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** The lower-cased hostname a Host header names; '' when absent or malformed. */
function hostnameOf(host: string | undefined): string {
  try {
    return host ? new URL(`http://${host}`).hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1') : '';
  } catch {
    return '';
  }
}

/** The Host names the metrics listener serves: loopback names on a loopback bind, any elsewhere (undefined). */
function metricsHosts(bind: string): ReadonlySet<string> | undefined {
  const loopback = bind === 'localhost' || bind.startsWith('127.') || bind === '::1' || bind === '[::1]';
  return loopback ? new Set(LOOPBACK_NAMES) : undefined;
}

function listenLimits(http: NonNullable<GatewayConfig['listen']['http']>): ListenOptions {
  return Object.fromEntries(Object.entries(http).filter(([, value]: [string, unknown]) => value !== undefined));
}

function defaultLogger(config: GatewayConfig): Logger {
  return createGatewayLogger({ name: config.name, level: config.logLevel, format: config.logFormat });
}
