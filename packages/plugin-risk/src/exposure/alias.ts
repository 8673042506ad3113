import type { SluiceTool } from '@sluice/core';
import type { Candidate } from './candidate.js';
import type { ToolRule } from '../policy.js';
import { resolveToolSettings } from '../policy.js';

/** What the operator changes about how an imported tool is published. */
export interface Overrides {
  readonly alias?: string;
  readonly description?: string;
}

/** The alias and description override the rules give a tool of `server`, if any. */
export function overridesFor(
  rules: readonly ToolRule[],
  server: string,
  names: readonly string[],
): Overrides | undefined {
  const { alias, description } = resolveToolSettings(rules, server, names);
  if (alias === undefined && description === undefined) return undefined;
  return { ...(alias === undefined ? {} : { alias }), ...(description === undefined ? {} : { description }) };
}

/**
 * Re-identifies an imported tool as the operator said: the exposed name
 * becomes the alias (the proxy still calls the upstream by its own name) and
 * the description is replaced. The input schema is passed through untouched.
 * Returns the name the tool had before, when the alias changed it.
 */
export function applyOverrides(tool: SluiceTool, overrides: Overrides): string | undefined {
  const former = tool.name;
  if (overrides.description !== undefined) tool.definition = { ...tool.definition, description: overrides.description };
  if (overrides.alias === undefined || overrides.alias === former) return undefined;
  tool.name = overrides.alias;
  tool.definition = { ...tool.definition, name: overrides.alias };
  return former;
}

/** The same for a report candidate (`assess()`), without a server. */
export function overrideCandidate(candidate: Candidate, overrides: Overrides | undefined): Candidate {
  if (overrides === undefined) return candidate;
  const name = overrides.alias ?? candidate.name;
  const definition = {
    ...candidate.definition,
    name,
    ...(overrides.description === undefined ? {} : { description: overrides.description }),
  };
  return { ...candidate, name, definition, ...(name === candidate.name ? {} : { formerName: candidate.name }) };
}
