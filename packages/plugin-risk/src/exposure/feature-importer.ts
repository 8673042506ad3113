import { SluiceError } from '@sluice/core';
import type { FeatureBatch, FeatureKind, Logger, PluginMode } from '@sluice/core';
import type { RiskEngine } from '../assess.js';
import { RiskErrorCode } from '../errors.js';
import { logLedgerMismatch, logLifecycle, logPoisoningHit } from '../events.js';
import { isNewMismatch, recordHold } from '../audit-events.js';
import type { AuditSink } from '../audit-events.js';
import type { ToolShape } from '../definition.js';
import type { FingerprintLedger, LedgerCheck } from '../ledger/ledger.js';
import { blocks } from '../scan/patterns.js';
import { scanTool } from '../scan/scanner.js';
import { assertUpstreamName } from './registry.js';

const BY = 'risk';

/** Where the ledger keeps an upstream's prompts: beside its tools, never mistaken for them (upstream names have no `#`). */
export const promptLedgerId = (server: string): string => `${server}#prompts`;

interface Item {
  readonly kind: FeatureKind;
  readonly id: string;
  readonly shape: ToolShape;
}

/**
 * The risk rules for what an upstream offers besides tools: each prompt,
 * resource and template is scanned for poisoning like a tool description
 * (and kept out under `policy: 'block'`), and each prompt's definition
 * (description, arguments) is fingerprinted in the ledger: a prompt
 * redefined after it was approved is held, kept out until an operator
 * approves the new definition (`approveRereview('<upstream>#prompts', name)`).
 */
export class FeatureImporter {
  constructor(
    private readonly engine: RiskEngine,
    private readonly ledger: FingerprintLedger,
    private readonly logger: Logger,
    private readonly mode: PluginMode,
    private readonly audit?: AuditSink,
  ) {}

  async import(batch: FeatureBatch): Promise<FeatureBatch> {
    if (batch.source.kind !== 'upstream') return batch;
    const server = batch.source.upstream;
    assertUpstreamName(server);
    const items: Item[] = [
      ...batch.prompts.map((p) => ({ kind: 'prompt' as const, id: p.name, shape: promptShape(p) })),
      ...batch.resources.map((r) => ({ kind: 'resource' as const, id: r.uri, shape: describedShape(r) })),
      ...batch.templates.map((t) => ({ kind: 'template' as const, id: t.uriTemplate, shape: describedShape(t) })),
    ];
    const { config } = this.engine;
    const prompts: Item[] = [];
    for (const item of items) {
      const hits = scanTool(item.shape, { crossServer: config.crossServerReferences }).hits;
      const blocking = config.policy === 'block' && blocks(hits, config.blockAt);
      for (const hit of hits) logPoisoningHit(this.logger, server, item.id, hit, blocking ? 'blocked' : 'warned');
      if (blocking) {
        this.keepOut(
          batch,
          item,
          server,
          `${RiskErrorCode.POISONING_BLOCKED}: the ${item.kind} "${item.id}" carries poisoning signatures (${[...new Set(hits.map((h) => h.pattern))].join(', ')})`,
        );
        continue;
      }
      if (item.kind === 'prompt') prompts.push(item);
    }
    // The whole list at once, so that the prompts an upstream stopped offering are bounded like its tools.
    const checked = await this.ledger.checkAll(
      promptLedgerId(server),
      prompts.map((item) => item.shape),
    );
    for (const item of prompts) this.applyLedger(batch, item, server, checked.results.get(item.shape.name));
    return batch;
  }

  private applyLedger(
    batch: FeatureBatch,
    item: Item,
    server: string,
    check: LedgerCheck | SluiceError | undefined,
  ): void {
    if (check === undefined) return;
    if (SluiceError.is(check)) {
      this.keepOut(batch, item, server, `${RiskErrorCode.UNHASHABLE_DEFINITION}: ${check.message}`);
      return;
    }
    if (isNewMismatch(check)) {
      logLedgerMismatch(this.logger, promptLedgerId(server), item.id, check);
      recordHold(this.audit, this.logger, promptLedgerId(server), item.id, check);
    }
    if (check.lifecycle === 'AWAITING_REREVIEW')
      this.keepOut(
        batch,
        item,
        server,
        `${RiskErrorCode.TOOL_AWAITING_REREVIEW}: the prompt "${item.id}" was redefined after it was approved; it is held until an operator approves the new definition`,
      );
    else if (check.lifecycle === 'REVOKED')
      this.keepOut(batch, item, server, `${RiskErrorCode.TOOL_REVOKED}: the prompt "${item.id}" was revoked`);
  }

  /** Keeps an item out (in audit mode, says it would have). */
  private keepOut(batch: FeatureBatch, item: Item, server: string, reason: string): void {
    if (this.mode !== 'enforce') {
      logLifecycle(this.logger, { server, tool: item.id, phase: 'would-skip', reason });
      return;
    }
    batch.skip(item.kind, item.id, reason, BY);
    logLifecycle(this.logger, { server, tool: item.id, phase: 'skipped', reason });
  }
}

interface PromptLike {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: readonly { readonly name: string; readonly description?: string; readonly required?: boolean }[];
}

/** A prompt as the scanner and the ledger read a tool: its arguments as an input schema. */
function promptShape(prompt: PromptLike): ToolShape {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const argument of prompt.arguments ?? []) {
    properties[argument.name] = {
      type: 'string',
      ...(argument.description === undefined ? {} : { description: argument.description }),
    };
    if (argument.required === true) required.push(argument.name);
  }
  return {
    name: prompt.name,
    title: prompt.title,
    description: prompt.description,
    inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) },
  };
}

/** A resource or template as the scanner reads a tool: its name, title and description. */
function describedShape(item: {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
}): ToolShape {
  return { name: item.name, title: item.title, description: item.description, inputSchema: { type: 'object' } };
}
