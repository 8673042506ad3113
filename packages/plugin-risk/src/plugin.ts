import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import {
  CoreErrorCode,
  MemoryStore,
  SluiceError,
  Stage,
  Tokens,
  definePlugin,
  isToolCall,
  parseOptions,
} from '@sluice/core';
import type {
  CallToolResult,
  GuardedKind,
  Logger,
  Plugin,
  PluginApi,
  Services,
  SluiceTool,
  Store,
  ToolCatalog,
} from '@sluice/core';
import { ApprovalGate } from './approval/gate.js';
import { ApprovalTargets } from './approval/targets.js';
import { RiskApprover } from './approval/approver.js';
import type { PendingApproval } from './approval/pending.js';
import { OperatorQuestions } from './approval/questions.js';
import type { AnswerRefusal, OperatorVia } from './approval/questions.js';
import { ApprovalEvents } from './approval/approval-events.js';
import type { ApprovalEventListener } from './approval/approval-events.js';
import { RiskEngine } from './assess.js';
import { CallEvents } from './calls/call-events.js';
import { ResultScan } from './calls/result-scan.js';
import { ToolNameIndex } from './scan/scanner.js';
import { RiskErrorCode } from './errors.js';
import { RiskEvent } from './events.js';
import type { ExposureRegistry } from './exposure/registry.js';
import { FeatureImporter } from './exposure/feature-importer.js';
import { LOCAL_SOURCE, sourceKey } from './exposure/registry.js';
import { RiskImporter } from './exposure/importer.js';
import { CallHolds } from './ledger/holds.js';
import { FingerprintLedger, UNNAMED_OPERATOR } from './ledger/ledger.js';
import { auditApprovalEvent, auditLedgerDecision } from './audit-events.js';
import type { AuditSink } from './audit-events.js';
import { LedgerLifecycle } from './ledger/lifecycle.js';
import type { LedgerSharing } from './ledger/ledger.js';
import type { LedgerStore } from './ledger/store.js';
import { JsonFileStore } from './ledger/store.js';
import { LedgerSync } from './ledger/sync.js';
import type { RiskConfig } from './options.js';
import { RiskOptions } from './options.js';
import { RequestStateCodec } from './approval/request-state.js';
import { SecretMask, maskLogger } from './calls/secret-mask.js';
import { UpstreamLines } from './upstream-lines.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'risk';

/**
 * The request kinds the plugin's request and response taps are for. Approvals, holds of re-reviewed tools, the
 * call events and the result scan concern tool calls; resources and prompts are scanned and fingerprinted when
 * they enter the server (`importFeatures`), not per request.
 */
const TOOL_CALLS: readonly GuardedKind[] = Object.freeze(['tools/call']);
/** On the headers core asks its `listTools` taps with when it decides who hears of a change to some tools. */
const LIST_CHANGE = Symbol.for('dev.sluice/list-change');

/** Tokens under which the plugin registers its services in the server's container. */
export const RiskTokens = Object.freeze({
  Ledger: Symbol.for('dev.sluice/risk/Ledger'),
});

/** The risk plugin, with the operator's controls over the fingerprint ledger. */
export interface RiskPlugin extends Plugin {
  /**
   * Accepts the definition an upstream tool has now (by the upstream's
   * configured name and its own tool name): its calls run again. `by`
   * names who decided, for the ledger's record (default `operator`); `via`
   * names how, for the audit log (`console`, `admin-api`; default `code`).
   */
  approveRereview(serverId: string, toolName: string, by?: string, via?: string): Promise<void>;
  /** Refuses calls to the tool until it is approved again. `by` and `via` as for `approveRereview`. */
  revoke(serverId: string, toolName: string, by?: string, via?: string): Promise<void>;
  /** The ledger, once the plugin is applied (at once for `persist: 'file'` or `'memory'`). */
  readonly ledger: FingerprintLedger | undefined;
  /**
   * Calls waiting for a person's approval, on every replica sharing the
   * store, oldest first: every one still waiting (at most
   * `approval.questions.max` can wait at once): tool, level, reason, caller,
   * since when. Never the arguments; an operator question's text only.
   */
  pendingApprovals(): Promise<PendingApproval[]>;
  /**
   * Whether the question with this id still waits for an answer, on any
   * replica sharing the store: one lookup, however many questions wait.
   */
  approvalWaiting(id: string): Promise<boolean>;
  /**
   * An operator's answer to a pending operator question (by its id), given
   * on any replica: the call waiting for it, wherever it waits, learns it.
   * `by` is the operator's verified identity; the first answer stands.
   */
  answerApproval(id: string, answer: OperatorAnswer): Promise<{ ok: true } | { ok: false; why: AnswerRefusal }>;
  /**
   * Listens to approval events (asked, answered, lapsed, refused) of every
   * server the plugin is applied to; returns the function that stops.
   */
  onApprovalEvent(listener: ApprovalEventListener): () => void;
  /**
   * The exposed names whose calls are held now, on every server the plugin
   * is applied to: awaiting re-review, revoked, kept out on a later import,
   * or held for a reference to another upstream's tool. A hold goes with its
   * tool: a name its source no longer exposes (renamed, dropped) holds
   * nothing.
   */
  heldCalls(): HeldCall[];
}

/** A name whose calls are held (`RiskPlugin.heldCalls`). */
export interface HeldCall {
  /** The exposed name. */
  readonly name: string;
  /** The source whose copy is held: an upstream's configured name, or `local`. */
  readonly server: string;
  /** The source's own name for the tool. */
  readonly tool: string;
  readonly code: RiskErrorCode;
  readonly message: string;
}

/** What an operator answers, and who, through what. */
export interface OperatorAnswer {
  readonly decision: 'approved' | 'denied';
  readonly by: string;
  readonly via: OperatorVia;
  readonly reason?: string | undefined;
}

/**
 * Identifies, scores and scans every tool that enters the server before any
 * model can reach it (server and tool risk levels, poisoning signatures, the
 * fingerprint ledger, the shadowing rules); asks a person before calls of
 * tools marked HITL; and wraps every call in the safe-wrapping contract
 * (alias and description override, `tool.start` / `tool.done` /
 * `tool.crash` with risk fields, secrets masked).
 */
export function risk(options: RiskOptions = {}): RiskPlugin {
  const config = parseOptions(PLUGIN_NAME, RiskOptions, options);
  const lifecycles = new Set<LedgerLifecycle>();
  const allHolds = new Set<CallHolds>();
  const approvers = new Set<RiskApprover>();
  const listeners = new Set<ApprovalEventListener>();
  // One audit log per store the plugin's servers use: a decision is recorded once in each chain.
  const audits = new Map<Store, AuditSink>();
  const recordDecision = async (
    action: 'approve' | 'revoke',
    server: string,
    tool: string,
    by?: string,
    via?: string,
  ) => {
    for (const sink of audits.values())
      await auditLedgerDecision(sink, action, server, tool, by ?? UNNAMED_OPERATOR, via ?? 'code');
  };
  const mask = new SecretMask(config.secrets);
  let ledger: FingerprintLedger | undefined =
    config.ledger.persist === 'file' || config.ledger.persist === 'memory' ? createLedger(config) : undefined;

  const requireLedger = (): FingerprintLedger => {
    if (ledger) return ledger;
    throw new SluiceError(
      CoreErrorCode.INVALID_STATE,
      'The risk ledger exists once the plugin is applied to a server',
      { plugin: PLUGIN_NAME },
    );
  };

  return definePlugin({
    name: PLUGIN_NAME,
    version: VERSION,
    mode: config.mode,
    get ledger() {
      return ledger;
    },
    apply(api: PluginApi) {
      const logger = maskLogger(api.logger, mask);
      // Core's own lines with upstream text (failed calls, stderr) are masked of the same values.
      if (!mask.empty) api.services.redactions.add(mask.values);
      const holds = new CallHolds();
      allHolds.add(holds);
      // A held tool its source no longer exposes takes no call: its hold goes with it, so renames leave nothing.
      api.tools.subscribe(({ removed }) => {
        for (const tool of removed) {
          const server = sourceKey(tool.source);
          const now = api.tools.get(tool.name);
          if (now === undefined || sourceKey(now.source) !== server) holds.forget(tool.name, server);
        }
      });
      // What upstreams list is logged within each upstream's share; the server's own tools are not counted.
      const lines = new UpstreamLines(logger, api.services.clock, config.logs.perUpstream, new Set([LOCAL_SOURCE]));
      const lifecycle = new LedgerLifecycle(holds, api.tools, logger, lines.logger);
      lifecycles.add(lifecycle);
      const targets = new ApprovalTargets(config.approval.channel);
      const audit: AuditSink = (event, from) => api.services.audit.append(event, from);
      if (!audits.has(api.services.store)) audits.set(api.services.store, audit);
      const engine = new RiskEngine(config, () => api.services.clock.now());
      // Replicas' changes are applied as holds, which need the ledger, which needs the sync: called only once calls flow.
      const sync = sharedSync(config, api, ledger, () => syncFromStore(lifecycle, requireLedger(), api));
      ledger ??= createLedger(config, api.services, sync);
      api.services.container.register(RiskTokens.Ledger, { useValue: ledger });
      const importer = new RiskImporter(engine, ledger, holds, lifecycle, lines.logger, api.mode, targets, audit);
      api.hooks.import.tapPromise({ name: PLUGIN_NAME, stage: Stage.RISK }, (batch) => importer.import(batch));
      const features = new FeatureImporter(engine, ledger, lines.logger, api.mode, audit);
      api.hooks.importFeatures.tapPromise({ name: PLUGIN_NAME, stage: Stage.RISK }, (batch) => features.import(batch));
      tapHolds(api, holds, sync);
      // In audit mode nothing is hidden: the core logs the refusals the request taps would have made.
      // A hold hides a tool from every caller alike: who hears of a change to it is decided without it.
      if (api.mode === 'enforce')
        api.hooks.listTools.tap({ name: PLUGIN_NAME, stage: Stage.RISK }, (tools, ctx) =>
          LIST_CHANGE in ctx.headers ? tools : holds.filter(tools, (name) => importer.registry.sourceOf(name)),
        );
      const events = new ApprovalEvents(logger);
      events.on((event) => {
        for (const listener of listeners) listener(event);
      });
      // Every question asked, answered, lapsed or refused goes to this server's audit log.
      events.onAudit((event, from) => auditApprovalEvent(audit, logger, event, from));
      const approver = createApprover(config, api, logger, mask, targets, events);
      approvers.add(approver);
      api.services.container.register(Tokens.Approver, { useValue: approver });
      const approvals = new ApprovalGate(targets, approver, config.approval, api.mode, mask.text);
      api.hooks.request.tap({ name: PLUGIN_NAME, stage: Stage.APPROVAL, kinds: TOOL_CALLS }, (ctx) =>
        isToolCall(ctx) ? approvals.check(ctx) : undefined,
      );
      tapCallEvents(api, new CallEvents(logger, config.calls.events, config.calls.level, mask));
      if (config.scanResults) {
        const scan = new ResultScan(
          { policy: config.policy, blockAt: config.blockAt, crossServer: config.crossServerReferences },
          api.mode,
          logger,
          namesOf(importer.registry),
        );
        api.hooks.response.tap({ name: PLUGIN_NAME, stage: Stage.RISK, kinds: TOOL_CALLS }, (result, ctx) =>
          isToolCall(ctx) ? scan.check(result as CallToolResult, ctx) : result,
        );
      }
    },
    async approveRereview(serverId: string, toolName: string, by?: string, via?: string) {
      await requireLedger().approveRereview(serverId, toolName, by);
      await recordDecision('approve', serverId, toolName, by, via);
      for (const lifecycle of lifecycles) lifecycle.approve(serverId, toolName);
    },
    async pendingApprovals() {
      const lists = await Promise.all([...approvers].map((approver) => approver.pending()));
      // Servers sharing one store list the same operator questions.
      const unique = new Map(lists.flat().map((wait) => [wait.id, wait]));
      return [...unique.values()].sort((a, b) => a.since - b.since);
    },
    async approvalWaiting(id: string) {
      // Servers sharing one store share their questions: any that knows the question waiting says so.
      const answers = await Promise.all([...approvers].map((approver) => approver.waiting(id)));
      return answers.includes(true);
    },
    async answerApproval(id: string, answer: OperatorAnswer) {
      let outcome: { ok: true } | { ok: false; why: AnswerRefusal } = { ok: false, why: 'unknown' };
      for (const approver of approvers) {
        outcome = await approver.answer(id, { ...answer, reason: answer.reason });
        if (outcome.ok || outcome.why !== 'unknown') return outcome;
      }
      return outcome;
    },
    heldCalls() {
      return [...allHolds].flatMap((holds) => holds.list());
    },
    onApprovalEvent(listener: ApprovalEventListener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async revoke(serverId: string, toolName: string, by?: string, via?: string) {
      await requireLedger().revoke(serverId, toolName, by);
      await recordDecision('revoke', serverId, toolName, by, via);
      for (const lifecycle of lifecycles) lifecycle.revoke(serverId, toolName);
    },
  });
}

/** The exposed names as an index, rebuilt only when the registry changed. */
function namesOf(registry: ExposureRegistry): () => ToolNameIndex {
  let version = -1;
  let index = new ToolNameIndex([]);
  return () => {
    if (registry.version !== version) {
      index = new ToolNameIndex(registry.names());
      version = registry.version;
    }
    return index;
  };
}

function createLedger(config: RiskConfig, services?: Services, sharing?: LedgerSharing): FingerprintLedger {
  return new FingerprintLedger(
    ledgerStore(config, services),
    services ? () => services.clock.now() : Date.now,
    sharing,
    { maxVanished: config.ledger.maxVanished },
  );
}

/**
 * Replicas share the ledger when it lives in the server's store and that
 * store is not this process's memory: only then is there anything to sync.
 */
function sharedSync(
  config: RiskConfig,
  api: PluginApi,
  existing: FingerprintLedger | undefined,
  apply: () => Promise<void>,
): LedgerSync | undefined {
  const store = api.services.store;
  if (existing !== undefined || store.kind === 'memory') return undefined;
  if (config.ledger.persist !== 'store' && config.ledger.persist !== 'auto') return undefined;
  return new LedgerSync(store, () => api.services.clock.now(), config.ledger.syncMs, apply);
}

/** Reloads every exposed upstream's record and applies what other replicas changed. */
async function syncFromStore(lifecycle: LedgerLifecycle, ledger: FingerprintLedger, api: PluginApi): Promise<void> {
  const changed: string[] = [];
  for (const server of exposedUpstreams(api.tools)) {
    for (const entry of await ledger.entries(server)) {
      const name = lifecycle.sync(server, entry.name, entry.lifecycle);
      if (name !== undefined) changed.push(name);
    }
  }
  if (changed.length > 0) api.tools.notifyChanged(changed);
}

/** Upstreams with tools exposed now: what a shared ledger's changes can touch. */
function exposedUpstreams(tools: ToolCatalog): Set<string> {
  const upstreams = new Set<string>();
  for (const name of tools.names()) {
    const source = tools.get(name)?.source;
    if (source?.kind === 'upstream') upstreams.add(source.upstream);
  }
  return upstreams;
}

/** Refuses held calls. With a shared ledger, a call of an imported tool first catches up with the other replicas. */
function tapHolds(api: PluginApi, holds: CallHolds, sync: LedgerSync | undefined): void {
  const tap = { name: PLUGIN_NAME, stage: Stage.RISK, kinds: TOOL_CALLS };
  if (sync === undefined) {
    api.hooks.request.tap(tap, (ctx) => (isToolCall(ctx) ? holds.refuse(ctx) : undefined));
    return;
  }
  api.hooks.request.tapPromise(tap, async (ctx) => {
    if (!isToolCall(ctx)) return undefined;
    if (ctx.tool.source.kind === 'upstream') await sync.due();
    return holds.refuse(ctx);
  });
}

/** The events' taps are for the tools they apply to: calls of the others (local tools, by default) skip them. */
function tapCallEvents(api: PluginApi, events: CallEvents): void {
  api.hooks.execute.tap({ name: PLUGIN_NAME, stage: Stage.DEFAULT }, (next, tool) => events.wrap(next, tool));
  if (!events.enabled) return;
  const tools = (tool: SluiceTool) => events.applies(tool);
  api.hooks.request.tap({ name: PLUGIN_NAME, stage: Stage.FIRST, tools, kinds: TOOL_CALLS }, (ctx) =>
    isToolCall(ctx) ? events.start(ctx) : undefined,
  );
  api.hooks.settled.tap({ name: PLUGIN_NAME, stage: Stage.DEFAULT, tools }, (ctx, outcome) =>
    events.settle(ctx, outcome),
  );
}

/** The approver `ctx.approve()` reaches, with the key that seals 2026-07-28 state. */
function createApprover(
  config: RiskConfig,
  api: PluginApi,
  logger: Logger,
  mask: SecretMask,
  targets: ApprovalTargets,
  events: ApprovalEvents,
): RiskApprover {
  const secret = config.approval.secret;
  if (secret === undefined) {
    const shared = api.services.store.kind !== 'memory';
    const line = { event: RiskEvent.APPROVAL_KEY_EPHEMERAL, store: api.services.store.kind };
    const message =
      '2026-07-28 approvals are sealed with a key made at start-up: they do not survive a restart or cross replicas until every replica is given the same approval key';
    // One process with a memory store loses its approvals at a restart anyway: worth a word only when debugging.
    if (shared) logger.warn(line, message);
    else logger.debug(line, message);
  }
  const key = secret === undefined ? randomBytes(32) : Buffer.from(secret, 'utf8');
  const now = () => api.services.clock.now();
  return new RiskApprover({
    codec: new RequestStateCodec(key),
    store: api.services.store,
    now,
    questions: new OperatorQuestions(
      api.services.store,
      now,
      config.approval.operator.pollMs,
      config.approval.questions,
    ),
    events,
    config: config.approval,
    logger,
    mask: mask.text,
    targetOf: (ctx) => targets.bindingOf(ctx),
  });
}

function ledgerStore(config: RiskConfig, services: Services | undefined): LedgerStore {
  const file = () => new JsonFileStore(resolve(config.ledger.path));
  switch (config.ledger.persist) {
    case 'file':
      return file();
    case 'memory':
      return new MemoryStore();
    case 'store':
    case 'auto':
      if (!services)
        throw new SluiceError(
          RiskErrorCode.LEDGER_UNREADABLE,
          'The server store is known only once the plugin is applied',
          { plugin: PLUGIN_NAME },
        );
      // A shared store (Redis) is what replicas agree on; the in-memory one would forget approvals on restart.
      return config.ledger.persist === 'store' || services.store.kind !== 'memory' ? services.store : file();
  }
}
