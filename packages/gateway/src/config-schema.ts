import { AuditOptions } from '@sluice/audit';
import { MIN_ROUND_STATE_SECRET_BYTES } from '@sluice/core';
import { CredentialVaultOptions } from '@sluice/upstream';
import {
  HttpConnectionSchema,
  ImportOptionsSchema,
  RequestFilterOptions,
  SseConnectionSchema,
  StdioConnectionSchema,
} from '@sluice/upstream';
import { ListenerAuthOptions } from '@sluice/http';
import { AuthzOptions } from '@sluice/plugin-authz';
import { ChainingOptions } from '@sluice/plugin-chaining';
import { CodeModeOptions } from '@sluice/plugin-code-mode';
import { ConcurrencyOptions } from '@sluice/plugin-concurrency';
import { EgressOptions } from '@sluice/plugin-egress';
import { LoopGuardOptions } from '@sluice/plugin-loop-guard';
import { RiskSettings } from '@sluice/plugin-risk';
import { ToolSearchOptions } from '@sluice/plugin-tool-search';
import { RedisStoreConfig } from '@sluice/store-redis';
import { z } from 'zod';
import { HealthPath } from './health.js';
import { VERSION } from './version.js';

/** A URL path on the HTTP listener. */
const UrlPath = z.string().regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/, 'must be a URL path starting with "/"');

/** A port, as a number or a numeric string (so `"${SLUICE_PORT:-3000}"` works). */
const Port = z
  .union([
    z.number(),
    z
      .string()
      .regex(/^\d{1,5}$/, 'must be a port number')
      .transform(Number),
  ])
  .pipe(z.number().int('must be a port number').min(0).max(65_535));

export const HttpListenConfig = z
  .object({
    /** The address to bind. Keep loopback unless something in front authenticates callers. */
    host: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe('The address to bind. Keep loopback unless something in front authenticates callers.'),
    /** 0 picks a free port. A numeric string is accepted, for `${VAR}` references. */
    port: Port.default(3000).describe('0 picks a free port. A numeric string is accepted, for `${VAR}` references.'),
    /** The MCP endpoint. */
    path: UrlPath.default('/mcp').describe('The MCP endpoint.'),
    /**
     * Origins a browser request may come from: a bare hostname matches it on the listener's port, `host:port` or
     * `https://host` match exactly. Default: the loopback names on the listener's port.
     */
    allowedOrigins: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Origins a browser request may come from: a bare hostname matches it on the listener's port, `host:port` or `https://host` match exactly. Default: the loopback names on the listener's port.",
      ),
    /** Hostnames the `Host` header may name. Default: the loopback names on a loopback bind, no check otherwise. */
    allowedHosts: z
      .array(z.string().min(1))
      .optional()
      .describe(
        'Hostnames the `Host` header may name. Default: the loopback names on a loopback bind, no check otherwise.',
      ),
    /** Largest request body accepted, in bytes (default 4 MiB). */
    maxBodyBytes: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Largest request body accepted, in bytes (default 4 MiB).'),
    /**
     * Who may call: `{ "type": "oauth", ... }` (bearer tokens from your authorization server),
     * `{ "type": "apiKeys", "keys": [...] }`, or `{ "type": "none" }` (the default; loopback only).
     */
    auth: ListenerAuthOptions.optional().describe(
      'Who may call: `{ "type": "oauth", ... }` (bearer tokens from your authorization server), `{ "type": "apiKeys", "keys": [...] }`, or `{ "type": "none" }` (the default; loopback only).',
    ),
    /** Serve a non-loopback host without authentication anyway; warned at every start. */
    allowUnauthenticated: z
      .boolean()
      .default(false)
      .describe('Serve a non-loopback host without authentication anyway; warned at every start.'),
    /** 2025-11-25 sessions open at once (default 10 000); unfinished and idle ones are evicted first. */
    maxSessions: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('2025-11-25 sessions open at once (default 10 000); unfinished and idle ones are evicted first.'),
    /** Estimated memory of all 2025-11-25 sessions together, in bytes (default 64 MiB). */
    maxSessionMemoryBytes: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Estimated memory of all 2025-11-25 sessions together, in bytes (default 64 MiB).'),
    /** 2025-11-25 sessions one verified caller holds at once, and that fraction of maxSessionMemoryBytes; past it the caller's own least recently used session is evicted. Default a quarter of maxSessions. */
    maxSessionsPerCaller: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "2025-11-25 sessions one verified caller holds at once, and that fraction of maxSessionMemoryBytes; past it the caller's own least recently used session is evicted. Default a quarter of maxSessions.",
      ),
    /** Largest `initialize` request that opens a session, in bytes (default 64 KiB). */
    maxInitializeBytes: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Largest `initialize` request that opens a session, in bytes (default 64 KiB).'),
    /** A session unused this long is closed, in ms (default 30 minutes). */
    sessionIdleMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('A session unused this long is closed, in ms (default 30 minutes).'),
    /** A session whose client sent nothing after `initialize` is closed after this long, in ms (default 30 000). */
    sessionHandshakeMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'A session whose client sent nothing after `initialize` is closed after this long, in ms (default 30 000).',
      ),
    /** Time to receive a request's headers, in ms (default 10 000). */
    headersTimeoutMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Time to receive a request's headers, in ms (default 10 000)."),
    /** Time to receive a whole request, in ms (default 30 000). */
    requestTimeoutMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Time to receive a whole request, in ms (default 30 000).'),
    /** An idle keep-alive connection is closed after this long, in ms (default 5 000). */
    keepAliveTimeoutMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('An idle keep-alive connection is closed after this long, in ms (default 5 000).'),
    /** Connections open at once (default 1 024); more are closed as they arrive. */
    maxConnections: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Connections open at once (default 1 024); more are closed as they arrive.'),
    /** Connections that have not yet had a request admitted (no key checked, or a wrong one); past it the oldest is closed. Default a quarter of maxConnections. */
    maxUnauthenticatedConnections: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Connections that have not yet had a request admitted (no key checked, or a wrong one); past it the oldest is closed. Default a quarter of maxConnections.',
      ),
    /** Connections one verified caller (an API key, a token\'s subject) holds at once; past it 429. Default a quarter of maxConnections. */
    maxConnectionsPerCaller: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "Connections one verified caller (an API key, a token's subject) holds at once; past it 429. Default a quarter of maxConnections.",
      ),
    /** Held event streams (2025-11-25 GET streams, 2026-07-28 subscriptions/listen) open at once; past it 429. Default half of maxConnections. */
    maxHeldStreams: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Held event streams (2025-11-25 GET streams, 2026-07-28 subscriptions/listen) open at once; past it 429. Default half of maxConnections.',
      ),
    /** Held event streams one verified caller holds at once; past it 429. Default a sixteenth of maxConnections. */
    maxHeldStreamsPerCaller: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Held event streams one verified caller holds at once; past it 429. Default a sixteenth of maxConnections.',
      ),
    /** A held event stream that carried nothing but keep-alives this long is closed; the client reconnects. Default 600 000 (10 min). */
    heldStreamIdleMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'A held event stream that carried nothing but keep-alives this long is closed; the client reconnects. Default 600 000 (10 min).',
      ),
  })
  .strict();

export const ListenConfig = z
  .object({
    /** Streamable HTTP (both protocol versions). */
    http: HttpListenConfig.optional().describe('Streamable HTTP (both protocol versions).'),
    /** stdio: the gateway's stdout carries the protocol; logs stay on stderr. */
    stdio: z
      .boolean()
      .default(false)
      .describe("stdio: the gateway's stdout carries the protocol; logs stay on stderr."),
  })
  .strict()
  .refine((listen) => listen.http !== undefined || listen.stdio, 'listen on http, on stdio, or on both');

/** Connections a file can describe (an in-process server is a live object, so it cannot be one). */
export const UpstreamConnectionConfig = z.discriminatedUnion('type', [
  StdioConnectionSchema,
  HttpConnectionSchema,
  SseConnectionSchema,
]);

/** One upstream: `server.import()` options, with a connection a file can describe. */
export const UpstreamConfig = ImportOptionsSchema.extend({
  /** How to reach the upstream: `stdio` (a command Sluice spawns), `http` (Streamable HTTP) or `sse`. */
  connection: UpstreamConnectionConfig.describe(
    'How to reach the upstream: `stdio` (a command Sluice spawns), `http` (Streamable HTTP) or `sse`.',
  ),
});

/** A plugin from another package or a file: its module exports a plugin factory. */
export const CustomPluginConfig = z
  .object({
    module: z
      .string()
      .min(1)
      .describe(
        'A package name, or a path (starting with . or /) relative to the config file, of a module exporting a plugin factory',
      ),
    export: z.string().min(1).optional().describe('The export that is the factory (default: the default export)'),
    options: z.unknown().optional().describe("The factory's options, validated by the plugin's own schema"),
  })
  .strict();

export const PluginsConfig = z
  .object({
    /** `@sluice/plugin-loop-guard`: refuses call loops and imports that would close one. */
    loopGuard: LoopGuardOptions.optional().describe(
      '`@sluice/plugin-loop-guard`: refuses call loops and imports that would close one.',
    ),
    /** The `x-sluice-*` request-header filter. Default: on when listening on HTTP; `false` turns it off. */
    requestFilter: z
      .union([RequestFilterOptions, z.literal(false)])
      .optional()
      .describe('The `x-sluice-*` request-header filter. Default: on when listening on HTTP; `false` turns it off.'),
    /** `@sluice/plugin-risk`: risk levels, poisoning scan, fingerprint ledger, shadowing rules. */
    risk: RiskSettings.optional().describe(
      '`@sluice/plugin-risk`: risk levels, poisoning scan, fingerprint ledger, shadowing rules.',
    ),
    /** `@sluice/plugin-concurrency`: per-tool limits with a queue, load shedding, intent mutex. */
    concurrency: ConcurrencyOptions.optional().describe(
      '`@sluice/plugin-concurrency`: per-tool limits with a queue, load shedding, intent mutex.',
    ),
    /** `@sluice/plugin-egress`: caps result sizes. */
    egress: EgressOptions.optional().describe('`@sluice/plugin-egress`: caps result sizes.'),
    /** `@sluice/plugin-chaining`: follows `nextTool` directives through the whole pipeline. */
    chaining: ChainingOptions.optional().describe(
      '`@sluice/plugin-chaining`: follows `nextTool` directives through the whole pipeline.',
    ),
    /** `@sluice/plugin-code-mode`: meta-tools that run one sandboxed script over many tools, every call guarded. */
    codeMode: CodeModeOptions.optional().describe(
      '`@sluice/plugin-code-mode`: meta-tools that run one sandboxed script over many tools, every call guarded.',
    ),
    /** `@sluice/plugin-authz`: which verified callers may see and call which tools. */
    authz: AuthzOptions.optional().describe(
      '`@sluice/plugin-authz`: which verified callers may see and call which tools.',
    ),
    /** `@sluice/plugin-tool-search`: `tools/list` shows search tools; the model finds the tools it may call by search. */
    toolSearch: ToolSearchOptions.optional().describe(
      '`@sluice/plugin-tool-search`: `tools/list` shows search tools; the model finds the tools it may call by search.',
    ),
    /** Plugins from other packages or files, applied after the built-in ones; stages order their taps the same way. */
    custom: z
      .array(CustomPluginConfig)
      .optional()
      .describe(
        'Plugins from other packages or files, applied after the built-in ones; stages order their taps the same way.',
      ),
  })
  .strict();

/** The scope metrics on the MCP listener ask of a verified caller unless `telemetry.metricsScopes` names others. */
export const METRICS_SCOPE = 'sluice:metrics';

export const TelemetryConfig = z
  .object({
    /** A span per call, continuing the caller's `_meta.traceparent` (recorded only when an OpenTelemetry SDK is registered). */
    tracing: z
      .boolean()
      .default(true)
      .describe(
        "A span per call, continuing the caller's `_meta.traceparent` (recorded only when an OpenTelemetry SDK is registered).",
      ),
    /** Where the HTTP listener serves Prometheus metrics; `false` (or no HTTP listener) collects none. */
    metricsPath: z
      .union([UrlPath, z.literal(false)])
      .default('/metrics')
      .describe('Where the HTTP listener serves Prometheus metrics; `false` (or no HTTP listener) collects none.'),
    /**
     * Scopes a verified caller needs for metrics on the MCP listener (a caller with the
     * `admin.scopes` may scrape too): an MCP key alone does not read the gateway's upstreams,
     * tools and counts. `[]` lets every verified caller scrape.
     */
    metricsScopes: z
      .array(z.string().min(1).max(128))
      .max(16)
      .default([METRICS_SCOPE])
      .describe(
        'Scopes a verified caller needs for metrics on the MCP listener (a caller with the `admin.scopes` may scrape too); `[]` lets every verified caller scrape; default `sluice:metrics`',
      ),
    /**
     * Serve metrics on a listener of their own (no authentication: bind it where only the scraper
     * reaches). Without it, metrics share the MCP listener and its authentication.
     */
    metricsListen: z
      .object({
        host: z.string().min(1).default('127.0.0.1').describe('The address the metrics listener binds.'),
        port: Port.default(9464).describe('The port of the metrics listener; 0 picks a free one.'),
      })
      .strict()
      .optional()
      .describe(
        'Serve metrics on a listener of their own (no authentication: bind it where only the scraper reaches). Without it, metrics share the MCP listener and its authentication.',
      ),
  })
  .strict();

export const LogLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** `auto`: readable lines when stderr is a terminal, JSON lines otherwise. */
export const LogFormat = z.enum(['auto', 'json', 'pretty']);

export const HealthConfig = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe('Serve /healthz and /readyz on the HTTP listener, without authentication (they name no upstream)'),
    ready: z
      .enum(['anyUpstream', 'allUpstreams', 'listening'])
      .default('anyUpstream')
      .describe(
        '/readyz answers 200 once listening and: at least one upstream is up (or none is configured), every upstream is up, or always; 503 while draining',
      ),
  })
  .strict();

/** The scope the admin API and console ask of a verified caller unless `admin.scopes` names others. */
export const ADMIN_SCOPE = 'sluice:admin';

const HTTP_URL = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

/** Where new operator questions are posted, and how the answer links are made. */
export const ApprovalWebhookConfig = z
  .object({
    url: HTTP_URL.describe('The receiver: each new operator question is POSTed here as JSON, signed'),
    secret: z
      .string()
      .refine((value) => Buffer.byteLength(value, 'utf8') >= 32, 'must be at least 32 bytes')
      .describe(
        'HMAC-SHA256 key (at least 32 bytes) that signs each POST (`x-sluice-signature: t=<ms>,v1=<hex>` over `<t>.<body>`) and seals its answer links; give every replica the same one',
      ),
    publicUrl: HTTP_URL.optional().describe(
      "The gateway's address as the receiver reaches it, for the answer links; default: where listen.http listens",
    ),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .max(60_000)
      .default(5_000)
      .describe('How long a POST to the receiver may take'),
    maxInFlight: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(8)
      .describe('POSTs open to the receiver at once, per replica; more wait in the queue'),
    maxQueued: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .default(500)
      .describe(
        'POSTs waiting for an open one to finish, per replica (oldest first; one whose question was answered or lapsed meanwhile, on any replica, is not sent); a question past that is not posted, and logged (`approval.webhook.dropped`): it still waits in the console, the admin API and `sluice approvals`',
      ),
  })
  .strict();

export const AdminConfig = z
  .object({
    console: z.boolean().default(true).describe('Serve the web console at /console beside the admin API at /admin/v1'),
    scopes: z
      .array(z.string().min(1).max(128))
      .max(16)
      .default([ADMIN_SCOPE])
      .describe(
        'Scopes a verified caller needs for the admin API and the console (with oauth or apiKeys), so that an MCP key alone cannot approve tools; default `sluice:admin`',
      ),
    webhook: ApprovalWebhookConfig.optional().describe(
      'Operator approvals by webhook: each new operator question is POSTed (signed) to a receiver with one-time approve and deny links',
    ),
    session: z
      .object({
        ttlMs: z
          .number()
          .int()
          .min(60_000)
          .max(7 * 86_400_000)
          .default(8 * 3_600_000)
          .describe('A console login lasts at most this long (and never beyond the OAuth token it was made with)'),
        idleMs: z
          .number()
          .int()
          .min(60_000)
          .max(86_400_000)
          .default(30 * 60_000)
          .describe('A console login unused this long ends'),
        max: z
          .number()
          .int()
          .min(1)
          .max(10_000)
          .default(100)
          .describe('Console logins kept at once per replica; a new one beyond ends the least recently used'),
        secureCookie: z
          .boolean()
          .default(false)
          .describe(
            'Mark the session cookie Secure even over plain HTTP: set it when a proxy terminates TLS in front of the gateway',
          ),
        maxFailures: z
          .number()
          .int()
          .min(1)
          .max(1_000)
          .default(5)
          .describe('Failed console logins one client address may make per failure window before it must wait'),
        failureWindowMs: z
          .number()
          .int()
          .min(1_000)
          .max(86_400_000)
          .default(60_000)
          .describe('The window over which failed console logins are counted'),
      })
      .strict()
      .prefault({})
      .describe(
        'The console login (/console/login) on a listener with auth: its session cookie and failed-login limit',
      ),
  })
  .strict();

/** The gateway config file. Unknown fields are errors, so a typo never silently turns a guard off. */
export const GatewayConfig = z
  .object({
    /** Editors may point this at the output of `sluice schema`. */
    $schema: z.string().optional().describe('Editors may point this at the output of `sluice schema`.'),
    /** The server name clients see. */
    name: z.string().min(1).default('sluice-gateway').describe('The server name clients see.'),
    /** The server version clients see. */
    version: z.string().min(1).default(VERSION).describe('The server version clients see.'),
    /** Shown to clients at initialization. */
    instructions: z.string().optional().describe('Shown to clients at initialization.'),
    /** Where clients connect: an HTTP listener, stdio, or both. */
    listen: ListenConfig.prefault({ http: {} }).describe('Where clients connect: an HTTP listener, stdio, or both.'),
    /** The MCP servers whose tools the gateway serves, each behind every guard. */
    upstreams: z
      .array(UpstreamConfig)
      .default([])
      .describe('The MCP servers whose tools the gateway serves, each behind every guard.'),
    /** Each plugin's own options; a plugin left out is not loaded. */
    plugins: PluginsConfig.prefault({}).describe("Each plugin's own options; a plugin left out is not loaded."),
    /** `memory` (one process) or `{ redis: "redis://..." }` (limits and ledger shared by replicas). */
    store: z
      .union([z.literal('memory'), RedisStoreConfig])
      .default('memory')
      .describe('`memory` (one process) or `{ redis: "redis://..." }` (limits and ledger shared by replicas).'),
    /** Tracing and metrics. */
    telemetry: TelemetryConfig.prefault({}).describe('Tracing and metrics.'),
    /** The least severe log level written (to stderr). */
    logLevel: LogLevel.default('info').describe('The least severe log level written (to stderr).'),
    /** Readable or JSON log lines; `--log-format` overrides it. */
    logFormat: LogFormat.default('auto').describe('Readable or JSON log lines; `--log-format` overrides it.'),
    /** The liveness and readiness endpoints for load balancers and orchestrators. */
    health: HealthConfig.prefault({}).describe(
      'The liveness and readiness endpoints for load balancers and orchestrators.',
    ),
    /** The admin API and web console, on the HTTP listener behind its authentication; off unless set. */
    admin: AdminConfig.optional().describe(
      'The admin API (/admin/v1) and the web console (/console) on the HTTP listener, behind its authentication; off unless set.',
    ),
    /** The audit log of decisions (approvals, ledger), in the store: how many entries it keeps. */
    audit: AuditOptions.prefault({}).describe(
      'The audit log of decisions (approvals, ledger), hash-chained in the store: how many entries it keeps.',
    ),
    /**
     * The key (at least 32 bytes) that seals an upstream's 2026-07-28 input-required state between rounds. Give
     * every replica the same one, from the environment. Absent: a random key per process.
     */
    roundStateSecret: z
      .string()
      .refine((value) => Buffer.byteLength(value, 'utf8') >= MIN_ROUND_STATE_SECRET_BYTES, {
        message: `must be at least ${MIN_ROUND_STATE_SECRET_BYTES} bytes`,
      })
      .optional()
      .describe(
        'The key (at least 32 bytes) that seals an upstream\'s 2026-07-28 input-required state between rounds. Give every replica the same one, from the environment (`"${SLUICE_ROUND_STATE_KEY}"`). Absent: a random key per process, so the retry must reach the replica that sealed the state.',
      ),
    /**
     * The vault that seals upstream grants (AES-256-GCM) in the store: needed by `per_user` upstreams. Keys come
     * from the environment; the first seals, every one opens, so a new key goes first and the old one second
     * until `sluice credentials rotate` has resealed every record.
     */
    credentialVault: CredentialVaultOptions.optional().describe(
      'The vault that seals upstream grants (AES-256-GCM) in the store; needed by `per_user` upstreams. `{ "keys": [{ "id": "k1", "key": "${SLUICE_VAULT_KEY}" }] }`: 32 random bytes, base64; the first key seals, every key opens (rotation: new key first, old key second, then `sluice credentials rotate`).',
    ),
    /** How long shutdown waits for running calls, in ms. */
    drainTimeoutMs: z
      .number()
      .int()
      .nonnegative()
      .default(10_000)
      .describe('How long shutdown waits for running calls, in ms.'),
    /** How long a replica keeps serving after SIGTERM with /readyz at 503, so the balancer stops sending first. */
    drainDelayMs: z
      .number()
      .int()
      .nonnegative()
      .max(300_000)
      .default(0)
      .describe(
        "On shutdown, how long to keep serving while /readyz answers 503, before taking no new requests, in ms: at least the load balancer's health-check interval times its fall count, for a rolling restart without failed calls.",
      ),
  })
  .strict()
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    config.upstreams.forEach((upstream, index) => {
      const first = seen.get(upstream.name);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['upstreams', index, 'name'],
          message: `"${upstream.name}" is already the name of upstreams.${first}`,
        });
      else seen.set(upstream.name, index);
      if (upstream.name === 'local' && config.plugins.risk !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['upstreams', index, 'name'],
          message:
            'the risk plugin gives "local" to the server\'s own tools (its ledger and holds): rename the upstream',
        });
    });
    const http = config.listen.http;
    if (http && config.health.enabled && Object.values(HealthPath).includes(http.path as never)) {
      ctx.addIssue({
        code: 'custom',
        path: ['listen', 'http', 'path'],
        message: `${http.path} is the health endpoint`,
      });
    }
    if (config.admin && !http)
      ctx.addIssue({ code: 'custom', path: ['admin'], message: 'the admin API and console need listen.http' });
    config.upstreams.forEach((upstream, index) => {
      if (upstream.auth?.type === 'per_user' && !config.credentialVault)
        ctx.addIssue({
          code: 'custom',
          path: ['upstreams', index, 'auth'],
          message: "per_user keeps each caller's grant in the credential vault: set credentialVault",
        });
    });
    if (http && config.telemetry.metricsPath === http.path) {
      ctx.addIssue({
        code: 'custom',
        path: ['telemetry', 'metricsPath'],
        message: `must differ from listen.http.path (${http.path})`,
      });
    }
  });

/** A config as written in a file or passed to `createGateway()`. */
export type GatewayConfigInput = z.input<typeof GatewayConfig>;
/** A config with its defaults filled in. */
export type GatewayConfig = z.output<typeof GatewayConfig>;
export type UpstreamConfig = z.output<typeof UpstreamConfig>;
/** One upstream as written in the config. */
export type UpstreamConfigInput = z.input<typeof UpstreamConfig>;
export type PluginsConfig = z.output<typeof PluginsConfig>;
export type LogLevel = z.output<typeof LogLevel>;
export type LogFormat = z.output<typeof LogFormat>;
