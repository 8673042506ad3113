import { compileSchema } from '@sluice/core';
import type { CompiledSchema, SluiceTool } from '@sluice/core';
import { jsonSize } from './json-size.js';
import { utf8Cut } from './utf8.js';

/** At most this many strings are considered, this deep: past that the structure is refused, not walked. */
const MAX_LEAVES = 10_000;
const MAX_DEPTH = 32;

interface Leaf {
  readonly parent: Record<string, unknown> | unknown[];
  readonly key: string | number;
  readonly text: string;
}

/**
 * A copy of `value` whose longest strings are shortened (each to a prefix,
 * never inside a character) until its JSON fits in `room` bytes; undefined
 * when that cannot be done (too deep, too many strings, or what is not a
 * string is already too large). Only string values change, so a schema
 * that constrains no string's length or pattern still holds.
 */
export function shortenStrings(value: unknown, room: number): unknown {
  const copy = structuredClone(value);
  const leaves: Leaf[] = [];
  if (!collect(copy, leaves, 0)) return undefined;
  leaves.sort((a, b) => b.text.length - a.text.length);
  let excess = jsonSize(copy) - room;
  for (const leaf of leaves) {
    if (excess <= 0) break;
    const keep = Math.max(0, leaf.text.length - excess);
    const cut = leaf.text.slice(0, utf8Cut(leaf.text, keep).end);
    (leaf.parent as Record<string | number, unknown>)[leaf.key] = cut;
    excess = jsonSize(copy) - room;
  }
  return excess <= 0 ? copy : undefined;
}

function collect(value: unknown, leaves: Leaf[], depth: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (depth > MAX_DEPTH) return false;
  const entries: [string | number, unknown][] = Array.isArray(value) ? [...value.entries()] : Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof item === 'string') {
      if (leaves.length >= MAX_LEAVES) return false;
      leaves.push({ parent: value as Record<string, unknown>, key, text: item });
    } else if (!collect(item, leaves, depth + 1)) return false;
  }
  return true;
}

const compiled = new WeakMap<SluiceTool, CompiledSchema | undefined>();

/** Whether `structured` still satisfies the tool's output schema (compiled once per tool). */
export async function satisfiesOutputSchema(tool: SluiceTool, structured: unknown): Promise<boolean> {
  let schema = compiled.get(tool);
  if (schema === undefined && !compiled.has(tool)) {
    const outputSchema = tool.definition.outputSchema;
    schema = outputSchema === undefined ? undefined : compileSchema(outputSchema, 'output', tool.name);
    compiled.set(tool, schema);
  }
  if (schema === undefined) return false;
  return (await schema.validate(structured)).ok;
}
