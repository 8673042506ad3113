import { randomBytes } from 'node:crypto';
import { Stage, definePlugin, parseOptions, toolError } from '@sluice/core';
import type { CallContext, CallToolResult, Headers, Plugin, PluginApi, Tool } from '@sluice/core';
import type { Bindings } from './bindings.js';
import { buildBindings } from './bindings.js';
import { CodeModeErrorCode } from './errors.js';
import { metaTools, scriptsBusy } from './meta-tools.js';
import type { ParsedCodeModeOptions } from './options.js';
import { CodeModeOptions } from './options.js';
import type { Journal } from './journal.js';
import { JOURNAL_STATE_PREFIX, Journals, callerDigest, sha256 } from './journal.js';
import { JournalledRun, journalRefused } from './journalled-run.js';
import { featureRequestsOf, withFeatures } from './features.js';
import { ScriptPool } from './pool.js';
import { CpuShares } from './cpu-shares.js';
import { PausedShares } from './paused-shares.js';
import type { PauseRefusals } from './paused-shares.js';
import type { ScriptOutcome } from './sandbox.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'code-mode';

/**
 * On the headers of a `tools.list()` a plugin makes for itself: the list is
 * of what the caller may call, so plugins that only hide tools from
 * `tools/list` (tool search) leave it whole. A symbol never comes off the wire.
 */
const CATALOG_LIST = Symbol.for('dev.sluice/catalog-list');

/** The events code mode logs (`event` field). */
export const CodeModeEvent = Object.freeze({
  /** One per script: its source (cut to `auditSourceChars`), outcome, calls and costs. */
  SCRIPT: 'code_mode.script',
  /** A sandbox worker's WebAssembly module faulted (its next script compiles a fresh one), or the worker failed (warn). */
  ENGINE_RESET: 'code_mode.engine_reset',
  /** In audit mode with `expose: 'meta-tools'`: the tools a `tools/list` would have hidden. */
  WOULD_HIDE: 'code_mode.would_hide',
  /** A script refused with `SCRIPTS_BUSY` before it ran: which share was full (`caller`, `server`) or owed (`cpu`). */
  REFUSED: 'code_mode.refused',
  /** A script that paused could not keep its journal (`JOURNALS_FULL`): which share of paused scripts was full. */
  JOURNALS_FULL: 'code_mode.journals_full',
} as const);

/** One tool call of a script, as the audit log records it. */
export interface ScriptCallRecord {
  readonly tool: string;
  /** `ok`, or the code of the `ToolError` the script saw. */
  readonly outcome: string;
  readonly durationMs: number;
}

const SUGGESTIONS: Record<string, string> = {
  [CodeModeErrorCode.SCRIPT_ERROR]:
    'Fix the script and run it again; the binding files give each function’s exact name and arguments.',
  [CodeModeErrorCode.SCRIPT_STALLED]:
    'Await only tool calls and promises that they settle: there are no timers or events.',
  [CodeModeErrorCode.SCRIPT_TIMEOUT]:
    'Do less in one script (fewer or faster calls), or split the work across scripts.',
  [CodeModeErrorCode.CPU_LIMIT]: 'Do less computing in the script: smaller loops, and no waiting in a loop.',
  [CodeModeErrorCode.MEMORY_LIMIT]: 'Keep less in memory: reduce results as they arrive and return a summary.',
  [CodeModeErrorCode.TOOL_CALL_LIMIT]: 'Split the work across several scripts.',
  [CodeModeErrorCode.OUTPUT_TOO_LARGE]: 'Return a summary or one page of the data, not all of it.',
  [CodeModeErrorCode.CANCELLED]: 'Run the script again if it is still needed.',
};

/**
 * Code mode: meta-tools that let a model read compact TypeScript signatures
 * of the tools it may call and run one script that calls many of them, in a
 * QuickJS WebAssembly sandbox, with every call through the whole pipeline.
 */
export function codeMode(options: CodeModeOptions = {}): CodeModePlugin {
  const config = parseOptions(PLUGIN_NAME, CodeModeOptions, options);
  let pool: ScriptPool | undefined;
  // One share table for every server the instance is applied to.
  const slots = new ScriptSlots(config.limits.maxConcurrentScripts, config.limits.maxScriptsPerCaller);
  const cpu = new CpuShares(config.limits.cpuSharePerCaller, () => performance.now());
  const pauseRefusals: PauseRefusals = { caller: 0, server: 0 };
  return definePlugin({
    name: PLUGIN_NAME,
    version: VERSION,
    mode: config.mode,
    scripts: () => {
      const usage = slots.usage();
      const shares = cpu.usage();
      return {
        ...usage,
        cpuSharePerCaller: cpu.share,
        cpuChargedMs: shares.chargedMs,
        refused: { ...usage.refused, cpu: shares.refused },
        pausesRefused: { ...pauseRefusals },
      };
    },
    apply: (api) => {
      pool = new ScriptPool();
      applyCodeMode(api, config, pool, { slots, cpu, pauseRefusals });
    },
    close: async () => {
      await pool?.close();
    },
  });
}

/** The code-mode plugin, with its script shares for metrics. */
export interface CodeModePlugin extends Plugin {
  /** Scripts running now, the callers running them, and the shares (for the gateway's `/metrics`). */
  scripts(): ScriptShareUsage;
}

export interface ScriptShareUsage {
  readonly running: number;
  readonly callers: number;
  readonly maxConcurrentScripts: number;
  readonly maxScriptsPerCaller: number;
  /** The fraction of one core a caller's scripts may use on average (`limits.cpuSharePerCaller`). */
  readonly cpuSharePerCaller: number;
  /** CPU ms charged to callers for their scripts so far (worker threads and main thread). */
  readonly cpuChargedMs: number;
  /** Scripts refused because their caller's slots were full, the server's, or their caller owed CPU. */
  readonly refused: { readonly caller: number; readonly server: number; readonly cpu: number };
  /**
   * Scripts that could not pause (`JOURNALS_FULL`) because their caller's share of paused scripts was full, or the
   * server's (this process's refusals). Always there from `codeMode()`; optional for other implementations.
   */
  readonly pausesRefused?: { readonly caller: number; readonly server: number };
}

/** What the callers of every server the instance is applied to share: script slots and CPU (paused scripts are shared in the store). */
interface Shares {
  readonly slots: ScriptSlots;
  readonly cpu: CpuShares;
  readonly pauseRefusals: PauseRefusals;
}

function applyCodeMode(api: PluginApi, config: ParsedCodeModeOptions, pool: ScriptPool, shares: Shares): void {
  const { slots, cpu } = shares;
  const metaNames = new Set(Object.values(config.tools));
  // The header records of the lists bindings are built from: the meta-tools-only filter lets them through whole.
  const bindingLists = new WeakSet<Headers>();
  const cache = new BindingsCache();

  if (config.expose === 'meta-tools') {
    api.hooks.listTools.tap({ name: PLUGIN_NAME, stage: Stage.LAST }, (tools, ctx) => {
      if (bindingLists.has(ctx.headers)) return tools;
      if (api.mode === 'enforce') return tools.filter((t) => metaNames.has(t.name));
      ctx.logger.info(
        { event: CodeModeEvent.WOULD_HIDE, tools: tools.filter((t) => !metaNames.has(t.name)).length },
        'code mode would hide the tools behind its meta-tools',
      );
      return tools;
    });
  }

  const bindingsFor = (ctx: CallContext): Bindings => {
    const headers: Headers = { ...ctx.headers };
    bindingLists.add(headers);
    // Marks a list of what the caller may call, not what tools/list shows: tool search leaves it whole.
    Object.defineProperty(headers, CATALOG_LIST, { value: true });
    const tools = api.tools.list({ headers, authInfo: ctx.authInfo, transport: ctx.transport });
    return cache.get(tools, () =>
      buildBindings({
        tools,
        toolOf: (name) => api.tools.get(name),
        localServer: config.localServer,
        exclude: metaNames,
        searchTool: config.searchTool,
      }),
    );
  };

  const now = (): number => api.services.clock.now();
  const journals = new Journals(
    api.services.store,
    config.journal.secret === undefined ? randomBytes(32) : Buffer.from(config.journal.secret, 'utf8'),
    now,
    config.journal.ttlMs,
    new PausedShares(api.services.store, now, config.journal.ttlMs, config.journal, shares.pauseRefusals),
  );

  const execute = async (code: string, ctx: CallContext): Promise<CallToolResult> => {
    const entered = performance.now();
    const limits = config.limits;
    const caller = callerDigest(ctx);
    // First, before any work for the script: a caller that owes CPU starts nothing until it has paid.
    const owed = cpu.admit(caller);
    if (owed !== undefined) {
      ctx.logger.info(
        { event: CodeModeEvent.REFUSED, share: 'cpu', owedMs: round(owed) },
        "script refused: its caller's scripts have used more than their share of CPU",
      );
      return scriptsBusy('cpu', limits.cpuSharePerCaller, owed);
    }
    if (Buffer.byteLength(code) > limits.maxScriptBytes) {
      return toolError({
        code: CodeModeErrorCode.SCRIPT_TOO_LARGE,
        message: `The script is larger than ${limits.maxScriptBytes} bytes.`,
        suggestion: 'Write a shorter script: leave the data to the tools.',
      });
    }
    const source = sha256(code);
    // The main thread's time for the script outside the pool is charged too (not the wait for the store).
    const admitted = performance.now() - entered;
    // A retry that carries the state of a script that paused resumes it from its journal (taken once).
    let journal: Journal | undefined;
    const wire: unknown = ctx.mcp?.mcpReq.requestState();
    if (typeof wire === 'string' && wire.startsWith(JOURNAL_STATE_PREFIX)) {
      const taken = await journals.take(wire, source, caller);
      if (typeof taken === 'string') return journalRefused(taken);
      journal = taken;
    }
    const busy = slots.take(caller);
    if (busy !== undefined) {
      const max = busy === 'caller' ? limits.maxScriptsPerCaller : limits.maxConcurrentScripts;
      ctx.logger.info(
        { event: CodeModeEvent.REFUSED, share: busy, max },
        busy === 'caller'
          ? 'script refused: its caller runs as many scripts as one caller may'
          : 'script refused: the server runs as many scripts as it may',
      );
      return scriptsBusy(busy, max);
    }
    const started = performance.now();
    const calls: ScriptCallRecord[] = [];
    const features = featureRequestsOf(api);
    const run = new JournalledRun(journal, ctx, features);
    let chargedMs = 0;
    const charge = (ms: number): number => {
      chargedMs += ms;
      return cpu.charge(caller, ms);
    };
    try {
      const bindings = bindingsFor(ctx);
      const layout = withFeatures(withSearch(bindings), features);
      const signal = AbortSignal.any([ctx.signal, run.stopped]);
      charge(admitted + performance.now() - started);
      const outcome = await pool.run({
        source: code,
        layout,
        limits,
        signal,
        call: async (tool, args, signal, id) => {
          const begun = performance.now();
          const reply = await run.call(tool, args, signal, id);
          calls.push({ tool, outcome: reply.ok ? 'ok' : reply.code, durationMs: round(performance.now() - begun) });
          return reply;
        },
        onFault: (message) => {
          ctx.logger.warn(
            { event: CodeModeEvent.ENGINE_RESET, err: message },
            'the sandbox module faulted; the next script gets a fresh one',
          );
        },
        charge,
      });
      const ended = await run.end(outcome, { source, caller, journals, maxBytes: config.journal.maxBytes });
      if (ended.refused !== undefined) {
        const { share, limit, max, held, bytes } = ended.refused;
        ctx.logger.info(
          { event: CodeModeEvent.JOURNALS_FULL, share, limit, max, held, bytes },
          share === 'caller'
            ? 'script could not pause: its caller holds as many paused scripts as one caller may'
            : 'script could not pause: the server keeps as many paused scripts as it may',
        );
      }
      const closing = performance.now();
      const result = ended.result ?? resultOf(ended.outcome);
      charge(performance.now() - closing);
      audit(ctx, config, code, ended.outcome, calls, { durationMs: performance.now() - started, chargedMs });
      return result;
    } finally {
      slots.release(caller);
    }
  };

  for (const tool of metaTools({ config, bindingsFor, execute })) api.tool(tool);
}

function resultOf(outcome: ScriptOutcome): CallToolResult {
  if (!outcome.ok) {
    return toolError({
      code: outcome.code,
      message: outcome.message,
      ...(SUGGESTIONS[outcome.code] ? { suggestion: SUGGESTIONS[outcome.code] } : {}),
      ...(outcome.logs.length > 0 ? { details: { logs: outcome.logs } } : {}),
    });
  }
  const value = outcome.value;
  const text = outcome.logs.length > 0 ? JSON.stringify({ result: value, logs: outcome.logs }) : JSON.stringify(value);
  return { content: [{ type: 'text', text }], structuredContent: { result: value, logs: outcome.logs } };
}

function audit(
  ctx: CallContext,
  config: ParsedCodeModeOptions,
  code: string,
  outcome: ScriptOutcome,
  calls: readonly ScriptCallRecord[],
  costs: { readonly durationMs: number; readonly chargedMs: number },
): void {
  const cut = code.length > config.auditSourceChars;
  ctx.logger.info(
    {
      event: CodeModeEvent.SCRIPT,
      source: cut ? `${code.slice(0, config.auditSourceChars)}…` : code,
      sourceBytes: Buffer.byteLength(code),
      outcome: outcome.ok ? 'ok' : outcome.code,
      ...(outcome.ok ? {} : { error: outcome.message }),
      calls,
      durationMs: round(costs.durationMs),
      cpuMs: round(outcome.cpuMs),
      chargedMs: round(costs.chargedMs),
    },
    outcome.ok ? 'script ran' : 'script stopped',
  );
}

type Layout = Readonly<Record<string, Readonly<Record<string, string>>>>;

/**
 * The layout plus `tools.search`, when the caller may call the search tool (`tools` is reserved: no server takes
 * it). For a caller who may not, the search tool is not bound: a script calling it is answered as for a tool that
 * does not exist.
 */
function withSearch(bindings: Bindings): Layout {
  const { layout, search } = bindings;
  return search === undefined ? layout : { ...layout, tools: { search } };
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/**
 * Script slots: at most `total` scripts at once on the server, and at most
 * `perCaller` of one caller, so that one caller whose scripts wait (for slow
 * tools, for a person) holds its own share, not everyone's. A script holds
 * its slot for its whole wall time, waiting included.
 */
export class ScriptSlots {
  private running = 0;
  private readonly byCaller = new Map<string, number>();
  private readonly refused = { caller: 0, server: 0 };

  constructor(
    private readonly total: number,
    private readonly perCaller: number,
  ) {}

  /** Takes a slot for `caller`, or says which share is full. */
  take(caller: string): 'caller' | 'server' | undefined {
    const mine = this.byCaller.get(caller) ?? 0;
    if (mine >= this.perCaller) return this.refuse('caller');
    if (this.running >= this.total) return this.refuse('server');
    this.running++;
    this.byCaller.set(caller, mine + 1);
    return undefined;
  }

  usage(): Omit<ScriptShareUsage, 'cpuSharePerCaller' | 'cpuChargedMs' | 'refused' | 'pausesRefused'> & {
    readonly refused: { readonly caller: number; readonly server: number };
  } {
    return {
      running: this.running,
      callers: this.byCaller.size,
      maxConcurrentScripts: this.total,
      maxScriptsPerCaller: this.perCaller,
      refused: { ...this.refused },
    };
  }

  private refuse(share: 'caller' | 'server'): 'caller' | 'server' {
    this.refused[share]++;
    return share;
  }

  release(caller: string): void {
    this.running--;
    const mine = (this.byCaller.get(caller) ?? 1) - 1;
    if (mine <= 0) this.byCaller.delete(caller);
    else this.byCaller.set(caller, mine);
  }
}

/** Bindings of the last few distinct lists, reused while the same tool definitions are listed. */
class BindingsCache {
  private readonly entries: { tools: readonly Tool[]; bindings: Bindings }[] = [];

  get(tools: readonly Tool[], build: () => Bindings): Bindings {
    const hit = this.entries.find((e) => sameList(e.tools, tools));
    if (hit) return hit.bindings;
    const bindings = build();
    this.entries.unshift({ tools: [...tools], bindings });
    if (this.entries.length > 8) this.entries.pop();
    return bindings;
  }
}

function sameList(a: readonly Tool[], b: readonly Tool[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
