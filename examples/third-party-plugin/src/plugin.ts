// #region factory
import { Stage, definePlugin, parseOptions, refusal } from '@sluice/core';
import type { Outcome, Plugin } from '@sluice/core';
import { AuditTrailErrorCode } from './errors.js';
import { AuditTrailOptions } from './options.js';
import './policy.js';
import { JsonlWriter, WriterHealth } from './writer.js';

const NAME = 'audit-trail';
const VERSION = '1.0.0';

function codeOf(outcome: Outcome): string | undefined {
  if (outcome.status === 'refused') return outcome.code;
  if (outcome.status === 'error') return outcome.error.code;
  return undefined;
}

/** Writes every call (tool, outcome, duration) to a JSONL file. */
export function auditTrail(options: AuditTrailOptions): Plugin {
  const config = parseOptions(NAME, AuditTrailOptions, options);
  return definePlugin({
    name: NAME,
    version: VERSION,
    mode: config.mode,
    apply({ hooks, logger, services }) {
      const writer = new JsonlWriter(config.file);
      const health = new WriterHealth(writer, () => services.clock.now());

      // Refuse calls while the file cannot be written: an audit gap is worse than a retry.
      hooks.preCall.tap({ name: NAME, stage: Stage.FIRST }, () =>
        health.writable()
          ? undefined
          : refusal({
              code: AuditTrailErrorCode.AUDIT_UNAVAILABLE,
              message: 'The audit trail cannot be written, so no call can run now.',
              suggestion: 'Retry in a minute; if it persists, tell the operator.',
              retryAfterMs: 60_000,
            }),
      );

      hooks.settled.tap({ name: NAME, stage: Stage.LAST }, (ctx, outcome) => {
        if (ctx.tool.policy.audit?.skip) return;
        health.write({
          time: new Date(services.clock.now()).toISOString(),
          tool: ctx.tool.name,
          status: outcome.status,
          durationMs: Math.round(outcome.durationMs * 1000) / 1000,
          ...(codeOf(outcome) ? { code: codeOf(outcome) } : {}),
          ...(ctx.requestId === undefined ? {} : { requestId: ctx.requestId }),
          ...(config.includeArguments ? { arguments: ctx.arguments } : {}),
        });
        logger.debug({ event: 'audit.written', tool: ctx.tool.name }, 'audit record written');
      });
    },
  });
}
// #endregion factory
