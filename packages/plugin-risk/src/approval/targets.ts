import type { CallContext, SluiceTool } from '@sluice/core';
import { publishedRiskOf } from '../exposure/published-risk.js';
import { sourceKey } from '../exposure/registry.js';
import { fingerprint } from '../ledger/ledger.js';
import type { RiskLevel } from '../scoring/levels.js';
import type { ApprovalChannelSetting } from './options.js';

/** What a person approves: a tool's source, exposed name, level and fingerprint. */
export interface ApprovalTarget {
  /** Its source: the upstream's configured name, or `local`. */
  readonly server: string;
  /** The name clients call it by. */
  readonly tool: string;
  /** The published (HITL-credited) level. */
  readonly level: RiskLevel;
  /** The ledger fingerprint of its definition: an approval binds to it. */
  readonly fingerprint: string;
  /** Who answers. */
  readonly channel: ApprovalChannelSetting;
}

/**
 * Which exposed names ask a person before each call, decided at import.
 * Looked up by name and checked against the calling tool's source, so that a
 * name another source took since is not gated by mistake.
 */
export class ApprovalTargets {
  /** `channel`: who answers a `ctx.approve()` of a tool that does not ask by itself. */
  constructor(private readonly channel: ApprovalChannelSetting = 'client') {}

  private readonly targets = new Map<string, ApprovalTarget>();
  private readonly fingerprints = new WeakMap<SluiceTool, string>();

  set(name: string, target: ApprovalTarget): void {
    this.targets.set(name, target);
  }

  /** Drops the name if `server` gated it. */
  delete(name: string, server: string): void {
    if (this.targets.get(name)?.server === server) this.targets.delete(name);
  }

  /** Drops everything `server` gated (its import carries its whole list). */
  forget(server: string): void {
    for (const [name, target] of this.targets) if (target.server === server) this.targets.delete(name);
  }

  /** The target of a call, or undefined when the tool runs unasked. */
  of(tool: SluiceTool): ApprovalTarget | undefined {
    if (this.targets.size === 0) return undefined;
    const target = this.targets.get(tool.name);
    return target !== undefined && target.server === sourceKey(tool.source) ? target : undefined;
  }

  /**
   * What an approval of this call binds to. Tools that ask were
   * fingerprinted at import; others (`ctx.approve()` from a handler) now.
   */
  bindingOf(ctx: CallContext): ApprovalTarget {
    const tool = ctx.tool;
    const target = this.of(tool);
    if (target !== undefined) return target;
    let print = this.fingerprints.get(tool);
    if (print === undefined) {
      try {
        print = fingerprint(tool.definition);
      } catch {
        print = `unhashable:${tool.name}`;
      }
      this.fingerprints.set(tool, print);
    }
    const level = publishedRiskOf(tool.definition)?.level ?? 'L0';
    return { server: sourceKey(tool.source), tool: tool.name, level, fingerprint: print, channel: this.channel };
  }
}
