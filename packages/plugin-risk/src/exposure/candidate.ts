import type { SluiceTool, Tool } from '@sluice/core';
import type { ToolShape } from '../definition.js';
import type { ExposedName } from './registry.js';

/** A tool about to be evaluated for exposure. */
export interface Candidate extends ExposedName {
  /** What clients will see (with any description override). */
  readonly definition: ToolShape;
  /** The name it had before an alias replaced it: rules still match it. */
  readonly formerName?: string;
}

/** Every name the per-tool rules match a candidate by. */
export function namesOf(candidate: Candidate): string[] {
  const names = [candidate.name, candidate.originalName];
  if (candidate.formerName !== undefined) names.push(candidate.formerName);
  return names;
}

export function candidateOf(tool: SluiceTool): Candidate {
  return { name: tool.name, originalName: originalNameOf(tool), definition: shapeOf(tool.definition) };
}

export function originalNameOf(tool: SluiceTool): string {
  return tool.source.kind === 'upstream' ? tool.source.originalName : tool.name;
}

/** The fields of a definition the engine reads. */
export function shapeOf(definition: Tool): ToolShape {
  return {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    inputSchema: definition.inputSchema,
    outputSchema: definition.outputSchema,
    annotations: definition.annotations,
  };
}
