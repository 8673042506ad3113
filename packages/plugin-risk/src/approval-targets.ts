import type { SluiceTool } from '@sluice/core';
import { sourceKey } from './gate.js';
import type { RiskLevel } from './levels.js';

/** A tool whose calls a person approves, as the import left it. */
export interface ApprovalTarget {
  /** Its source: the upstream's configured name, or `local`. */
  readonly server: string;
  /** The upstream's own name for it (the exposed name for local tools). */
  readonly tool: string;
  /** The published (HITL-credited) level. */
  readonly level: RiskLevel;
  /** The ledger fingerprint of its definition: an approval binds to it. */
  readonly fingerprint: string;
}

/**
 * Which exposed names ask a person before each call, decided at import.
 * Looked up by name and checked against the calling tool's source, so that a
 * name another source took since is not gated by mistake.
 */
export class ApprovalTargets {
  private readonly targets = new Map<string, ApprovalTarget>();

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
}
