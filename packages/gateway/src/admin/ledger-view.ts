import type { SluiceTool } from '@sluice/core';
import { SluiceError } from '@sluice/core';
import { lineDiff } from '@sluice/plugin-risk';
import type {
  DiffLine,
  FingerprintLedger,
  LedgerDecision,
  LedgerEntry,
  LedgerVerdict,
  Lifecycle,
  RiskPlugin,
} from '@sluice/plugin-risk';
import { GatewayErrorCode } from '../errors.js';

/** One tool of the ledger, as the admin API and the console show it. */
export interface LedgerRow {
  /** The upstream's configured name. */
  readonly server: string;
  /** The upstream's own name for the tool. */
  readonly tool: string;
  /** The name clients see, while the tool is registered. */
  readonly name: string | undefined;
  readonly lifecycle: Lifecycle;
  /** Whether the upstream still lists it. */
  readonly present: boolean;
  /** Whether the definition seen differs from the approved one. */
  readonly changed: boolean;
  readonly firstSeenAt: number;
  readonly changedAt: number | undefined;
  readonly approvedAt: number | undefined;
  readonly decisions: readonly LedgerDecision[];
  /** The scan's verdict (and the outside judge's) on the definition last scanned; absent in records written before it was kept. */
  readonly verdict: LedgerVerdict | undefined;
}

/** A tool's approved and current definitions, and the diff between them. */
export interface LedgerDiff {
  readonly row: LedgerRow;
  /** Unknown (null) for a record written before the ledger kept definitions. */
  readonly approved: string | null;
  readonly current: string | null;
  readonly diff: readonly DiffLine[];
}

/** Where the view reads the ledger and acts on it: the running risk plugin, or a ledger opened by the CLI. */
export interface LedgerAccess {
  readonly ledger: FingerprintLedger;
  approve(server: string, tool: string, by: string, via: string): Promise<void>;
  revoke(server: string, tool: string, by: string, via: string): Promise<void>;
}

/** The risk plugin as a `LedgerAccess`, once it is applied; undefined without one. */
export function pluginAccess(plugin: RiskPlugin | undefined): LedgerAccess | undefined {
  const ledger = plugin?.ledger;
  if (plugin === undefined || ledger === undefined) return undefined;
  return {
    ledger,
    approve: (server, tool, by, via) => plugin.approveRereview(server, tool, by, via),
    revoke: (server, tool, by, via) => plugin.revoke(server, tool, by, via),
  };
}

/**
 * The fingerprint ledger for operators: every tool of every configured
 * upstream with its lifecycle and decisions, the diff of a changed tool,
 * and the approve and revoke decisions, recorded with who made them.
 */
export class LedgerView {
  constructor(
    private readonly access: LedgerAccess,
    private readonly upstreams: () => readonly string[],
    private readonly tools: () => readonly SluiceTool[],
  ) {}

  async list(): Promise<LedgerRow[]> {
    const names = this.exposedNames();
    const rows: LedgerRow[] = [];
    for (const server of this.upstreams())
      for (const entry of await this.access.ledger.entries(server)) rows.push(rowOf(server, entry, names));
    return rows;
  }

  async diff(server: string, tool: string): Promise<LedgerDiff> {
    const entry = await this.entry(server, tool);
    const approved = entry.approvedDefinition ?? null;
    const current = entry.definition ?? null;
    return {
      row: rowOf(server, entry, this.exposedNames()),
      approved,
      current,
      diff: approved !== null && current !== null ? lineDiff(approved, current) : [],
    };
  }

  /** `via` names the channel for the audit log: `console`, `admin-api`. */
  async approve(server: string, tool: string, by: string, via: string): Promise<LedgerRow> {
    await this.entry(server, tool);
    await this.access.approve(server, tool, by, via);
    return rowOf(server, await this.entry(server, tool), this.exposedNames());
  }

  async revoke(server: string, tool: string, by: string, via: string): Promise<LedgerRow> {
    await this.entry(server, tool);
    await this.access.revoke(server, tool, by, via);
    return rowOf(server, await this.entry(server, tool), this.exposedNames());
  }

  private async entry(server: string, tool: string): Promise<LedgerEntry> {
    if (!this.upstreams().includes(server)) throw unknownTool(server, tool);
    const entry = (await this.access.ledger.entries(server)).find((e) => e.name === tool);
    if (entry === undefined) throw unknownTool(server, tool);
    return entry;
  }

  /** `server \u0000 upstream tool` to the exposed name. */
  private exposedNames(): Map<string, string> {
    const names = new Map<string, string>();
    for (const tool of this.tools())
      if (tool.source.kind === 'upstream')
        names.set(`${tool.source.upstream}\u0000${tool.source.originalName}`, tool.name);
    return names;
  }
}

function rowOf(server: string, entry: LedgerEntry, names: ReadonlyMap<string, string>): LedgerRow {
  return {
    server,
    tool: entry.name,
    name: names.get(`${server}\u0000${entry.name}`),
    lifecycle: entry.lifecycle,
    present: entry.present,
    changed: entry.seen !== entry.approved,
    firstSeenAt: entry.firstSeenAt,
    changedAt: entry.changedAt,
    approvedAt: entry.approvedAt,
    decisions: entry.decisions ?? [],
    verdict: entry.verdict,
  };
}

/** A verdict in a few words: the distinct patterns the scan found, and the judge's answer ("-" when none was kept). */
export function verdictSummary(verdict: LedgerVerdict | undefined): string {
  if (verdict === undefined) return '-';
  const patterns = [...new Set(verdict.hits.map((h) => h.pattern).filter((p) => p !== 'JUDGE_VERDICT'))];
  const scan = patterns.length === 0 ? 'clean' : patterns.join(', ');
  const judge = verdict.judge;
  if (judge === undefined) return `scan: ${scan}`;
  // The reason is the judge's text: one line, no control characters, for a terminal as much as a page.
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  const reason = judge.reason.slice(0, 120).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ');
  return `scan: ${scan}; judge: ${judge.poisoned ? 'poisoned' : 'clean'} (${reason})`;
}

function unknownTool(server: string, tool: string): SluiceError {
  return new SluiceError(
    GatewayErrorCode.UNKNOWN_LEDGER_TOOL,
    `The ledger has no tool "${tool}" from upstream "${server}"`,
  );
}
