import { annotationsOf } from '@sluice/core';
import type { SluiceTool, ToolAnnotations, ToolMatcher } from '@sluice/core';
import type { MutexConfig } from './options.js';

/** The operator's say on which tools are destructive, by selector, and how annotations are read. */
export interface DestructiveRules {
  readonly destructive: ToolMatcher;
  readonly exempt: ToolMatcher;
  readonly annotations: MutexConfig['annotations'];
}

/**
 * Read by the specification's defaults: a tool may destroy unless it says it
 * only reads (`readOnlyHint: true`) or says it does not destroy
 * (`destructiveHint: false`). A tool with no annotations may destroy.
 */
export function annotationsSayDestructive(annotations: ToolAnnotations): boolean {
  return annotations.readOnlyHint !== true && annotations.destructiveHint !== false;
}

/** Only an explicit mark: `destructiveHint: true` on a tool that does not say it only reads. */
export function annotationsMarkDestructive(annotations: ToolAnnotations): boolean {
  return annotations.readOnlyHint !== true && annotations.destructiveHint === true;
}

/**
 * Annotations are hints the specification calls untrusted: believed for
 * tools written here (local, adopted) and for upstreams the operator marked
 * trusted, never for other imported tools.
 */
export function trustsAnnotations(tool: SluiceTool): boolean {
  return tool.source.kind !== 'upstream' || tool.source.trusted;
}

/**
 * Whether a tool's calls are serialized by the intent mutex. The tool's own
 * policy decides first, then the operator's selectors (`destructive` before
 * `exempt`, so a conflict errs on the safe side), then trusted annotations:
 * by default only an explicit `destructiveHint: true`, as the mutex is for
 * actions marked destructive; with `annotations: 'spec-defaults'`, by the
 * specification's defaults.
 */
export function isDestructive(tool: SluiceTool, rules: DestructiveRules): boolean {
  if (typeof tool.policy.destructive === 'boolean') return tool.policy.destructive;
  if (rules.destructive(tool)) return true;
  if (rules.exempt(tool)) return false;
  if (!trustsAnnotations(tool)) return false;
  const read = rules.annotations === 'spec-defaults' ? annotationsSayDestructive : annotationsMarkDestructive;
  return read(annotationsOf(tool));
}
