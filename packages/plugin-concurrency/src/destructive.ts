import { annotationsOf } from '@sluice/core';
import type { SluiceTool, ToolAnnotations } from '@sluice/core';
import type { PatternSet } from './pattern.js';

/** The operator's say on which tools are destructive, by name or pattern. */
export interface DestructiveRules {
  readonly destructive: PatternSet;
  readonly exempt: PatternSet;
}

/**
 * Read by the specification's defaults: a tool may destroy unless it says it
 * only reads (`readOnlyHint: true`) or says it does not destroy
 * (`destructiveHint: false`). A tool with no annotations may destroy.
 */
export function annotationsSayDestructive(annotations: ToolAnnotations): boolean {
  return annotations.readOnlyHint !== true && annotations.destructiveHint !== false;
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
 * policy decides first, then the operator's patterns (`destructive` before
 * `exempt`, so a conflict errs on the safe side), then trusted annotations.
 */
export function isDestructive(tool: SluiceTool, rules: DestructiveRules): boolean {
  if (typeof tool.policy.destructive === 'boolean') return tool.policy.destructive;
  if (rules.destructive.has(tool.name)) return true;
  if (rules.exempt.has(tool.name)) return false;
  return trustsAnnotations(tool) && annotationsSayDestructive(annotationsOf(tool));
}
