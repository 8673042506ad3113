import { SluiceError } from '@sluice/core';
import type { ImportBatch, Logger, PluginMode, SluiceTool } from '@sluice/core';
import type { RiskEngine, ToolReport } from '../assess.js';
import { RiskErrorCode } from '../errors.js';
import { isNewMismatch, recordHold } from '../audit-events.js';
import type { AuditSink } from '../audit-events.js';
import {
  logJudgeUnavailable,
  logLedgerMismatch,
  logLifecycle,
  logPoisoningHit,
  logServerRisk,
  logToolRisk,
} from '../events.js';
import { ApprovalTargets } from '../approval/targets.js';
import type { CallHolds } from '../ledger/holds.js';
import { notExposedHold } from '../ledger/holds.js';
import type { FingerprintLedger, LedgerCheck } from '../ledger/ledger.js';
import { fingerprint } from '../ledger/ledger.js';
import type { LedgerLifecycle } from '../ledger/lifecycle.js';
import { PoisonPattern, blocks } from '../scan/patterns.js';
import { ToolNameIndex, scanTool } from '../scan/scanner.js';
import { judgeHits } from '../scan/judge.js';
import type { JudgeVerdict } from '../scan/judge.js';
import type { ServerAssessment } from '../scoring/server-risk.js';
import { deriveServerConfig } from '../scoring/upstream-source.js';
import { applyOverrides, overridesFor } from './alias.js';
import type { Candidate } from './candidate.js';
import { candidateOf, originalNameOf, shapeOf } from './candidate.js';
import { publish } from './published-risk.js';
import type { ExposedName } from './registry.js';
import { ExposureRegistry, LOCAL_SOURCE, assertUpstreamName } from './registry.js';
import type { ExposureView } from './shadowing.js';

const BY = 'risk';

/**
 * Runs each import batch through the risk engine and the ledger: keeps out
 * what the rules, the policy or the cap refuse, holds what awaits re-review,
 * and publishes the level of what it lets through.
 */
export class RiskImporter {
  readonly registry: ExposureRegistry;

  constructor(
    private readonly engine: RiskEngine,
    private readonly ledger: FingerprintLedger,
    private readonly holds: CallHolds,
    private readonly lifecycle: LedgerLifecycle,
    private readonly logger: Logger,
    private readonly mode: PluginMode,
    private readonly approvals: ApprovalTargets = new ApprovalTargets(),
    private readonly audit?: AuditSink,
  ) {
    this.registry = new ExposureRegistry(Object.keys(engine.config.servers));
  }

  async import(batch: ImportBatch): Promise<ImportBatch> {
    if (batch.source.kind === 'upstream') {
      assertUpstreamName(batch.source.upstream);
      await this.importUpstream(batch, batch.source.upstream);
    } else this.importLocal(batch);
    return batch;
  }

  private importLocal(batch: ImportBatch): void {
    for (const tool of [...batch.tools]) {
      const report = this.engine.evaluateLocal(tool.name, tool.policy.risk, this.registry);
      if (!report.exposed && this.refuse(batch, tool, report.reason as string)) continue;
      publish(tool, { level: 'L0', server: 'L0', tool: 'L0', floors: [], hitl: report.hitl, poisoning: [] });
      this.registry.add(LOCAL_SOURCE, [{ name: tool.name, originalName: tool.name }]);
      if (report.hitl)
        this.approvals.set(tool.name, {
          server: LOCAL_SOURCE,
          tool: tool.name,
          level: report.level,
          fingerprint: localFingerprint(tool),
          channel: report.channel,
        });
      else this.approvals.delete(tool.name, LOCAL_SOURCE);
    }
  }

  private async importUpstream(batch: ImportBatch, server: string): Promise<void> {
    const tools = [...batch.tools];
    // The ledger fingerprints what the upstream says, before the operator's alias or description override.
    const declared = tools.map((tool) => ({ ...shapeOf(tool.definition), name: originalNameOf(tool) }));
    const candidates = tools.map((tool) => this.reidentify(server, tool));
    const assessment = this.engine.assessUpstream(
      server,
      deriveServerConfig(batch.source),
      candidates.map((c) => c.definition),
    );
    logServerRisk(this.logger, server, assessment);
    const ledger = await this.ledger.checkAll(server, declared);
    this.approvals.forget(server);
    const view = batchView(this.registry, server, candidates);
    const names = new ToolNameIndex([...this.registry.names(), ...candidates.flatMap((c) => [c.name, c.originalName])]);
    const kept: ExposedName[] = [];
    const reports = candidates.map((candidate) => this.engine.evaluate(server, candidate, assessment, view, names));
    const checks = candidates.map((c) => ledger.results.get(c.originalName) as LedgerCheck | SluiceError);
    const judge = this.engine.judge;
    const verdicts: Array<JudgeVerdict | undefined> = [];
    if (judge)
      await Promise.all(
        candidates.map(async (candidate, i) => {
          const check = checks[i] as LedgerCheck | SluiceError;
          if (SluiceError.is(check)) return;
          const input = {
            server,
            fingerprint: check.hash,
            definition: declared[i] as Record<string, unknown>,
            hits: (reports[i] as ToolReport).hits,
          };
          try {
            const verdict = await judge.verdict(input);
            verdicts[i] = verdict;
            const judged = judgeHits(verdict);
            if (judged.length > 0)
              reports[i] = this.engine.evaluate(server, candidate, assessment, view, names, judged);
          } catch (error) {
            logJudgeUnavailable(this.logger, server, candidate.name, (error as Error).message);
          }
        }),
      );
    await this.ledger.recordVerdicts(
      server,
      candidates.flatMap((candidate, i) => {
        const check = checks[i] as LedgerCheck | SluiceError;
        if (SluiceError.is(check)) return [];
        const verdict = verdicts[i];
        return [
          {
            name: candidate.originalName,
            verdict: {
              fingerprint: check.hash,
              hits: (reports[i] as ToolReport).hits.map(({ pattern, severity, surface }) => ({
                pattern,
                severity,
                surface,
              })),
              ...(verdict === undefined ? {} : { judge: verdict }),
            },
          },
        ];
      }),
    );
    tools.forEach((tool, i) => {
      const candidate = candidates[i] as Candidate;
      if (
        this.admit(batch, tool, candidate, reports[i] as ToolReport, checks[i] as LedgerCheck | SluiceError, assessment)
      )
        kept.push(candidate);
    });
    for (const rename of ledger.renames)
      logLifecycle(this.logger, { server, tool: rename.to, phase: 'renamed', from: rename.from });
    for (const removed of ledger.removed) logLifecycle(this.logger, { server, tool: removed, phase: 'removed' });
    this.registry.replace(server, kept);
    if (this.engine.config.rules.crossServerReference) this.recheckReferencesTo(server, kept);
  }

  /**
   * R2 looking back: tools exposed earlier by other upstreams that point at
   * a tool this batch brought. Import order must not decide whether a
   * shadowing description gets through; those tools are held.
   */
  private recheckReferencesTo(server: string, kept: readonly ExposedName[]): void {
    if (kept.length === 0) return;
    const names = new ToolNameIndex(kept.flatMap((t) => [t.name, t.originalName]));
    for (const { server: other, tool } of this.registry.others(server)) {
      if (tool.definition === undefined || this.holds.get(tool.name)?.server === other) continue;
      const reference = scanTool(tool.definition, { otherTools: names, crossServer: 'concealed' }).hits.find(
        (h) => h.pattern === PoisonPattern.CROSS_SERVER_IMPERATIVE && h.severity === 'high',
      );
      if (reference === undefined) continue;
      const reason = `${RiskErrorCode.R2_CROSS_SERVER_REFERENCE}: the description of "${tool.name}" directs calls to "${reference.target}" of upstream "${server}", with concealment or exfiltration wording`;
      const hold = {
        ...notExposedHold(other, tool.originalName, tool.name, reason),
        code: RiskErrorCode.R2_CROSS_SERVER_REFERENCE,
      };
      // In audit mode the core turns the refusal into a log line, and the list is not filtered.
      this.holds.hold(tool.name, hold);
      logLifecycle(this.logger, { server: other, tool: tool.name, phase: 'held', code: hold.code, reason });
    }
  }

  private admit(
    batch: ImportBatch,
    tool: SluiceTool,
    candidate: Candidate,
    report: ToolReport,
    check: LedgerCheck | SluiceError,
    assessment: ServerAssessment,
  ): boolean {
    const { server, name } = report;
    const blocking =
      this.engine.config.policy === 'block' &&
      this.mode === 'enforce' &&
      blocks(report.hits, this.engine.config.blockAt);
    for (const hit of report.hits) logPoisoningHit(this.logger, server, name, hit, blocking ? 'blocked' : 'warned');
    if (report.assessment) logToolRisk(this.logger, server, name, report.assessment, report.risk);
    if (SluiceError.is(check))
      return !this.refuse(
        batch,
        tool,
        `${RiskErrorCode.UNHASHABLE_DEFINITION}: ${check.message}`,
        candidate.originalName,
      );
    if (isNewMismatch(check)) {
      logLedgerMismatch(this.logger, server, name, check);
      recordHold(this.audit, this.logger, server, candidate.originalName, check);
    }
    if (!report.exposed && this.refuse(batch, tool, report.reason as string, candidate.originalName)) return false;
    publish(tool, {
      level: report.level,
      server: report.risk.server,
      tool: report.risk.tool,
      floors: [...assessment.floors, ...(report.assessment?.floors ?? [])],
      hitl: report.hitl,
      poisoning: [...new Set(report.hits.map((h) => h.pattern))],
      ...judgeOf(report),
    });
    if (report.hitl)
      this.approvals.set(name, {
        server,
        tool: name,
        level: report.level,
        fingerprint: check.hash,
        channel: report.channel,
      });
    this.lifecycle.apply(server, candidate.originalName, name, check.lifecycle, report.level, check.repeated);
    return true;
  }

  /** Applies the operator's alias and description override; the candidate remembers the name the rules knew. */
  private reidentify(server: string, tool: SluiceTool): Candidate {
    const overrides = overridesFor(this.engine.config.tools, server, [tool.name, originalNameOf(tool)]);
    const former = overrides === undefined ? undefined : applyOverrides(tool, overrides);
    const candidate = candidateOf(tool);
    return former === undefined ? candidate : { ...candidate, formerName: former };
  }

  /**
   * Keeps a tool out (or, in audit mode, says it would have). Returns true if
   * the tool was kept out. A copy this source exposed before stays
   * registered in the core, so its calls are held too.
   */
  private refuse(batch: ImportBatch, tool: SluiceTool, reason: string, upstreamName = tool.name): boolean {
    const server = tool.source.kind === 'upstream' ? tool.source.upstream : LOCAL_SOURCE;
    if (this.mode !== 'enforce') {
      logLifecycle(this.logger, { server, tool: tool.name, phase: 'would-skip', reason });
      return false;
    }
    batch.skip(tool, reason, BY);
    logLifecycle(this.logger, { server, tool: tool.name, phase: 'skipped', reason });
    if (this.registry.sourceOf(tool.name) === server)
      this.holds.hold(tool.name, notExposedHold(server, upstreamName, tool.name, reason));
    return true;
  }
}

/** A local tool's fingerprint, for binding its approvals; one that cannot be fingerprinted binds by name alone. */
function localFingerprint(tool: SluiceTool): string {
  try {
    return fingerprint(shapeOf(tool.definition));
  } catch {
    return `unhashable:${tool.name}`;
  }
}

/** The registry, plus the batch's own tools as this server's. */
function batchView(registry: ExposureRegistry, server: string, candidates: readonly Candidate[]): ExposureView {
  const own = new Set(candidates.flatMap((c) => [c.name.toLowerCase(), c.originalName.toLowerCase()]));
  return {
    ownerOfAlias: (alias) => registry.ownerOfAlias(alias),
    ownerOfTool: (name) => (own.has(name.toLowerCase()) ? server : registry.ownerOfTool(name)),
    serverIds: registry.serverIds,
  };
}

/** The judge's verdict among a report's hits, as `_meta` publishes it. */
function judgeOf(report: ToolReport): { judge?: { reason: string; severity: string } } {
  const hit = report.hits.find((h) => h.pattern === PoisonPattern.JUDGE_VERDICT);
  return hit === undefined ? {} : { judge: { reason: hit.excerpt, severity: hit.severity } };
}
