import { parseOptions } from '@sluice/core';
import type { ComposedRisk } from './scoring/compose.js';
import { LOCAL_RISK, composeRisk } from './scoring/compose.js';
import type { ToolShape } from './definition.js';
import { isPlainObject } from './definition.js';
import { RiskErrorCode } from './errors.js';
import type { RiskLevel } from './scoring/levels.js';
import { isAbove } from './scoring/levels.js';
import type { RiskConfig } from './options.js';
import { RiskOptions } from './options.js';
import { overrideCandidate, overridesFor } from './exposure/alias.js';
import { needsApproval } from './approval/policy.js';
import { resolveToolSettings } from './policy.js';
import type { ApprovalChannelSetting } from './approval/options.js';
import type { Candidate } from './exposure/candidate.js';
import { namesOf } from './exposure/candidate.js';
import { ExposureRegistry, LOCAL_SOURCE } from './exposure/registry.js';
import { blocks } from './scan/patterns.js';
import type { ScanHit } from './scan/scanner.js';
import { ToolNameIndex, scanTool } from './scan/scanner.js';
import { BoundedJudge, httpJudge } from './scan/judge.js';
import type { ServerAssessment, ServerConfig } from './scoring/server-risk.js';
import { assessServer } from './scoring/server-risk.js';
import type { ExposureView, ShadowingViolation } from './exposure/shadowing.js';
import { checkShadowing } from './exposure/shadowing.js';
import type { ToolAssessment } from './scoring/tool-risk.js';
import { assessTool } from './scoring/tool-risk.js';

/** One tool of the report: its level, what tripped, and whether it would be exposed. */
export interface ToolReport {
  /** The upstream's configured name, or `local` for the server's own tools. */
  readonly server: string;
  readonly name: string;
  readonly level: RiskLevel;
  readonly risk: ComposedRisk;
  /** The tool's own score (absent for local tools, which are never scored). */
  readonly assessment?: ToolAssessment;
  readonly hits: readonly ScanHit[];
  readonly violation?: ShadowingViolation;
  /** The tool is marked for human approval. */
  readonly hitl: boolean;
  /** Who answers its approval (meaningful when `hitl`). */
  readonly channel: ApprovalChannelSetting;
  readonly exposed: boolean;
  /** Why it is not exposed. */
  readonly code?: RiskErrorCode;
  readonly reason?: string;
}

export interface ServerReport extends ServerAssessment {
  readonly id: string;
}

/** What `sluice check` shows: each upstream's level and each tool's level, floors, hits and verdict. */
export interface RiskReport {
  readonly servers: readonly ServerReport[];
  readonly tools: readonly ToolReport[];
}

export interface AssessInput {
  /** The upstream's configured name; absent for the server's own tools. */
  readonly server?: string;
  readonly definition: ToolShape;
  /** The tool's name at the upstream, when it is exposed under another. */
  readonly originalName?: string;
}

/** Scores, scans and judges tools against one configuration: shared by the plugin and `assess()`. */
export class RiskEngine {
  /** The outside judge of `scan.judge`, bounded and cached; none when unset. */
  readonly judge: BoundedJudge | undefined;

  constructor(
    readonly config: RiskConfig,
    private readonly now: () => number = Date.now,
  ) {
    const { judge, timeoutMs, cacheSize } = config.scan;
    this.judge =
      judge === undefined
        ? undefined
        : new BoundedJudge(typeof judge === 'function' ? judge : httpJudge(judge), { timeoutMs, cacheSize });
  }

  /** The operator's description of an upstream over what the import tells; write capability from the tools if unsaid. */
  assessUpstream(server: string, derived: ServerConfig, definitions: readonly ToolShape[]): ServerAssessment {
    const configured = this.config.servers[server] ?? {};
    const merged: ServerConfig = { ...derived, ...withoutUndefined(configured) };
    merged.writes ??= definitions.some((d) => !(isPlainObject(d.annotations) && d.annotations.readOnlyHint === true));
    return assessServer(merged, { catalog: this.config.catalog, now: this.now() });
  }

  /** Judges one tool of an upstream. `names` indexes every tool the scan compares against. */
  evaluate(
    server: string,
    candidate: Candidate,
    assessment: ServerAssessment,
    view: ExposureView,
    names: ToolNameIndex,
    judged: readonly ScanHit[] = [],
  ): ToolReport {
    const { name, definition } = candidate;
    const scanned = scanTool(definition, { otherTools: names, crossServer: this.config.crossServerReferences }).hits;
    const hits = judged.length === 0 ? scanned : [...scanned, ...judged];
    const known = namesOf(candidate);
    const settings = resolveToolSettings(this.config.tools, server, known);
    const toolAssessment = assessTool(definition, assessment, settings);
    const unmitigated = composeRisk(assessment, toolAssessment);
    const hitl = needsApproval(settings.hitl, known, unmitigated.composed, this.config.approval);
    const risk = hitl && this.creditsHitl ? composeRisk(assessment, toolAssessment, { hitl: true }) : unmitigated;
    const violation = checkShadowing(
      { name, server, description: definition.description, hits },
      view,
      this.config.rules,
    );
    const channel = settings.approvalChannel ?? this.config.approval.channel;
    const base = { server, name, level: risk.level, risk, assessment: toolAssessment, hits, hitl, channel };
    return { ...base, ...this.verdict(risk, hits, violation) };
  }

  /** A local tool: L0, never scored or scanned; only alias collisions apply. `hitl` is its policy's flag, if set. */
  evaluateLocal(
    name: string,
    policy: { readonly hitl?: boolean; readonly approvalChannel?: ApprovalChannelSetting } | undefined,
    view: ExposureView,
  ): ToolReport {
    const violation = checkShadowing(
      { name, server: LOCAL_SOURCE, description: undefined, hits: [] },
      view,
      this.config.rules,
    );
    const asks = needsApproval(policy?.hitl, [name], LOCAL_RISK.composed, this.config.approval);
    const channel = policy?.approvalChannel ?? this.config.approval.channel;
    const base = {
      server: LOCAL_SOURCE,
      name,
      level: LOCAL_RISK.level,
      risk: LOCAL_RISK,
      hits: [],
      hitl: asks,
      channel,
    };
    return { ...base, ...this.verdict(LOCAL_RISK, [], violation) };
  }

  /**
   * The approval gate asks a person before each call of a HITL tool, so the
   * tool is credited one band lower, as the seed's composition rule says.
   * Only in `enforce` mode: in `audit` mode nobody is asked, and the credit
   * would be for a check nobody makes.
   */
  private get creditsHitl(): boolean {
    return this.config.mode === 'enforce';
  }

  private verdict(risk: ComposedRisk, hits: readonly ScanHit[], violation: ShadowingViolation | undefined): Verdict {
    if (violation)
      return { exposed: false, violation, code: violation.rule, reason: `${violation.rule}: ${violation.message}` };
    if (hits.length > 0 && this.config.policy === 'block' && blocks(hits, this.config.blockAt)) {
      const patterns = [...new Set(hits.map((h) => h.pattern))].join(', ');
      return {
        exposed: false,
        code: RiskErrorCode.POISONING_BLOCKED,
        reason: `${RiskErrorCode.POISONING_BLOCKED}: poisoning signatures ${patterns}`,
      };
    }
    if (isAbove(risk.level, this.config.maxRisk)) {
      return {
        exposed: false,
        code: RiskErrorCode.ABOVE_MAX_RISK,
        reason: `${RiskErrorCode.ABOVE_MAX_RISK}: ${risk.level} is above maxRisk ${this.config.maxRisk}`,
      };
    }
    return { exposed: true };
  }
}

type Verdict = Pick<ToolReport, 'exposed' | 'code' | 'reason' | 'violation'>;

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The report for a set of tools, as if imported in this order under these
 * options: no ledger, no side effects. Tools without `server` are the
 * server's own (L0).
 */
export function assess(tools: readonly AssessInput[], options: RiskOptions = {}): RiskReport {
  const config = parseOptions('risk', RiskOptions, options);
  const engine = new RiskEngine(config);
  const registry = new ExposureRegistry(Object.keys(config.servers));
  const owners = new Map<string, string>();
  for (const tool of tools) {
    const server = tool.server ?? LOCAL_SOURCE;
    for (const name of [tool.definition.name, tool.originalName ?? tool.definition.name])
      owners.set(name.toLowerCase(), server);
  }
  const serverIds = new Set([
    ...registry.serverIds,
    ...tools.flatMap((t) => (t.server === undefined ? [] : [t.server])),
  ]);
  // Every tool of the report is exposed together: a reference to one listed later still crosses servers.
  const view: ExposureView = {
    ownerOfAlias: (alias) => registry.ownerOfAlias(alias),
    ownerOfTool: (name) => owners.get(name.toLowerCase()),
    serverIds,
  };
  const names = new ToolNameIndex(owners.keys());
  const servers = new Map<string, ServerAssessment>();
  const reports: ToolReport[] = [];
  for (const tool of tools) {
    const given = {
      name: tool.definition.name,
      originalName: tool.originalName ?? tool.definition.name,
      definition: tool.definition,
    };
    const candidate =
      tool.server === undefined
        ? given
        : overrideCandidate(given, overridesFor(config.tools, tool.server, [given.name, given.originalName]));
    const report =
      tool.server === undefined
        ? engine.evaluateLocal(candidate.name, undefined, view)
        : engine.evaluate(tool.server, candidate, serverOf(tool.server), view, names);
    if (report.exposed) registry.add(report.server, [candidate]);
    reports.push(report);
  }
  return { servers: [...servers].map(([id, assessment]) => ({ id, ...assessment })), tools: reports };

  function serverOf(id: string): ServerAssessment {
    let assessment = servers.get(id);
    if (!assessment) {
      const definitions = tools.filter((t) => t.server === id).map((t) => t.definition);
      assessment = engine.assessUpstream(id, {}, definitions);
      servers.set(id, assessment);
    }
    return assessment;
  }
}
