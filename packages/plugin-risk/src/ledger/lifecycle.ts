import type { Logger, ToolCatalog } from '@sluice/core';
import { RiskErrorCode } from '../errors.js';
import { logLifecycle } from '../events.js';
import type { RiskLevel } from '../scoring/levels.js';
import type { CallHolds } from './holds.js';
import { rereviewHold, revokedHold } from './holds.js';
import type { LedgerCheck } from './ledger.js';

type Lifecycle = LedgerCheck['lifecycle'];

const LEDGER_HOLDS: readonly RiskErrorCode[] = [RiskErrorCode.TOOL_AWAITING_REREVIEW, RiskErrorCode.TOOL_REVOKED];

/**
 * The ledger's re-review and revocation, applied to calls: a tool whose
 * definition changed, or that an operator revoked, is held; one approved
 * again runs. The ledger speaks in upstream names, holds in exposed ones:
 * core's catalog says which name each upstream tool is exposed under now.
 */
export class LedgerLifecycle {
  /**
   * `upstreamLogger`: where the lines an upstream's listing causes go (at
   * import, and holds seen on another replica), within its share of lines;
   * an operator's decisions go to `logger`, those made on another replica
   * too.
   */
  constructor(
    private readonly holds: CallHolds,
    private readonly tools: ToolCatalog,
    private readonly logger: Logger,
    private readonly upstreamLogger: Logger = logger,
  ) {}

  /**
   * Holds or releases calls according to the ledger, at import. A hold
   * already in place, or one the ledger reported before (`repeated`: the
   * tool went back to a definition held since its last approval), is not
   * logged again.
   */
  apply(server: string, tool: string, name: string, lifecycle: Lifecycle, level?: RiskLevel, repeated?: boolean): void {
    const leveled = level ? { level } : {};
    if (lifecycle === 'ACTIVE') {
      this.holds.release(name);
      logLifecycle(this.upstreamLogger, { server, tool: name, phase: 'exposed', ...leveled });
      return;
    }
    const hold = lifecycle === 'REVOKED' ? revokedHold(server, tool, name) : rereviewHold(server, tool, name);
    const before = this.holds.get(name);
    const known = before !== undefined && before.server === server && before.tool === tool && before.code === hold.code;
    this.holds.hold(name, hold);
    if (known || repeated === true) return;
    logLifecycle(this.upstreamLogger, { server, tool: name, phase: 'held', code: hold.code, ...leveled });
  }

  /**
   * An operator approved the tool's current definition: the callers that may
   * see it are told the list changed.
   */
  approve(server: string, tool: string): void {
    const name = this.tools.byOrigin(server, tool)?.name;
    if (name === undefined) return;
    this.holds.release(name, LEDGER_HOLDS);
    logLifecycle(this.logger, { server, tool: name, phase: 'approved' });
    this.tools.notifyChanged([name]);
  }

  /** An operator revoked the tool: the callers that saw it are told the list changed. */
  revoke(server: string, tool: string): void {
    const name = this.tools.byOrigin(server, tool)?.name;
    if (name === undefined) return;
    this.holds.hold(name, revokedHold(server, tool, name));
    logLifecycle(this.logger, { server, tool: name, phase: 'revoked', code: RiskErrorCode.TOOL_REVOKED });
    this.tools.notifyChanged([name]);
  }

  /**
   * Applies a lifecycle another replica wrote to the shared ledger: holds a
   * tool awaiting re-review or revoked, releases one approved. Returns the
   * exposed name if what calls and `tools/list` see of it changed.
   */
  sync(server: string, tool: string, lifecycle: Lifecycle): string | undefined {
    const name = this.tools.byOrigin(server, tool)?.name;
    if (name === undefined) return undefined;
    const hold = this.holds.get(name);
    const held = hold !== undefined && hold.server === server && LEDGER_HOLDS.includes(hold.code);
    if (lifecycle === 'ACTIVE') {
      if (!held) return undefined;
      this.holds.release(name, LEDGER_HOLDS);
      logLifecycle(this.logger, {
        server,
        tool: name,
        phase: 'approved',
        reason: 'approved on another replica',
      });
      return name;
    }
    const wanted = lifecycle === 'REVOKED' ? revokedHold(server, tool, name) : rereviewHold(server, tool, name);
    if (held && hold.code === wanted.code) return undefined;
    if (hold !== undefined && !held && hold.server === server) return undefined; // kept out for another reason already
    this.holds.hold(name, wanted);
    // A revocation is an operator's decision; a hold, what the upstream listed on another replica.
    logLifecycle(lifecycle === 'REVOKED' ? this.logger : this.upstreamLogger, {
      server,
      tool: name,
      phase: lifecycle === 'REVOKED' ? 'revoked' : 'held',
      code: wanted.code,
      reason: 'seen on another replica',
    });
    return name;
  }
}
