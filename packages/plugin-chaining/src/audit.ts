import type { CallContext, CallToolResult } from '@sluice/core';
import { stops } from './chain-stop.js';
import type { NextTool } from './directive.js';
import { readDirective } from './directive.js';
import type { ChainingConfig } from './options.js';
import { startState } from './server-chain.js';
import type { ChainCatalog } from './tool-catalog.js';
import { vetNext } from './vet-next.js';

/** Audit mode: say what the chain's first call would do, and leave the result as it is. */
export async function audit(
  config: ChainingConfig,
  catalog: ChainCatalog,
  ctx: CallContext,
  result: CallToolResult,
): Promise<CallToolResult> {
  const read = readDirective(result);
  if (read.kind === 'none') return result;
  const verdict =
    read.kind === 'invalid'
      ? stops.invalidDirective(read.key, read.message).code
      : await auditVerdict(config, catalog, ctx, read.next);
  ctx.logger.info(
    { event: 'chain.audit', origin: ctx.tool.name, tool: read.kind === 'valid' ? read.next.tool : undefined, verdict },
    'audit: chaining would act on this next-tool directive',
  );
  return result;
}

async function auditVerdict(
  config: ChainingConfig,
  catalog: ChainCatalog,
  ctx: CallContext,
  next: NextTool,
): Promise<string> {
  const vetted = await vetNext(startState(config, ctx), next, catalog.target(next.tool, ctx.tool.name));
  return vetted.ok ? 'would_follow' : vetted.stop.code;
}
