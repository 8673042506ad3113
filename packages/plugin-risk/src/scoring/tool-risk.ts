import { z } from 'zod';
import type { ToolShape } from '../definition.js';
import { HINTS, isPlainObject } from '../definition.js';
import type { RiskLevel } from './levels.js';
import { bucket, maxLevel } from './levels.js';

/** What a tool does beyond its annotations, as the operator knows it. */
export const SideEffectSchema = z.enum(['none', 'remote-write', 'remote-admin']);

export interface ToolTraits {
  /** `remote-write` +1, `remote-admin` +2 on the base-action axis. */
  readonly sideEffect?: z.infer<typeof SideEffectSchema> | undefined;
  /** The tool sends user data somewhere: +1. */
  readonly sendsUserData?: boolean | undefined;
}

/** The tool floor overrides. */
export const ToolFloor = Object.freeze({
  IRREVERSIBLE_VERB: 'irreversible_verb_in_name',
  DESTRUCTIVE_NOT_IDEMPOTENT: 'destructive_without_idempotent',
  UNDOCUMENTED: 'no_description_no_annotations',
} as const);
export type ToolFloor = (typeof ToolFloor)[keyof typeof ToolFloor];

const FLOOR_LEVEL: Readonly<Record<ToolFloor, RiskLevel>> = {
  irreversible_verb_in_name: 'L5',
  destructive_without_idempotent: 'L5',
  no_description_no_annotations: 'L4',
};

/** Documentation gaps, one point each on the doc axis (capped at 3). */
export type DocGap = 'description' | 'input-schema' | 'property-docs' | 'output-property-docs' | 'annotations';

export interface ToolAssessment {
  readonly level: RiskLevel;
  /** Base action plus (possibly waived) documentation penalty. */
  readonly total: number;
  readonly axes: { readonly action: number; readonly doc: number };
  readonly docGaps: readonly DocGap[];
  /** The server carries a trust signal, so the documentation penalty is zero. */
  readonly docWaived: boolean;
  readonly floors: readonly ToolFloor[];
}

/** The part of a server assessment the tool score needs: does the server carry any trust signal? */
export interface ServerTrust {
  readonly axes: { readonly trust: number };
}

/**
 * Scores one tool: what its annotations say it does (the spec's defaults
 * where it says nothing), how well it is documented, and the floors.
 */
export function assessTool(definition: ToolShape, server?: ServerTrust, traits: ToolTraits = {}): ToolAssessment {
  const hints = hintsOf(definition);
  const action = actionScore(hints, traits);
  const docGaps = documentationGaps(definition, hints);
  const docWaived = server !== undefined && server.axes.trust < 2;
  const doc = docWaived ? 0 : Math.min(3, docGaps.length);
  const floors = toolFloors(definition, hints);
  const total = action + doc;
  const level = floors.reduce<RiskLevel>((acc, floor) => maxLevel(acc, FLOOR_LEVEL[floor]), bucket(total));
  return { level, total, axes: { action, doc }, docGaps, docWaived, floors };
}

type Hints = Partial<Record<(typeof HINTS)[number], boolean>>;

function hintsOf(definition: ToolShape): Hints {
  const raw = isPlainObject(definition.annotations) ? definition.annotations : {};
  const hints: Hints = {};
  for (const key of HINTS) if (typeof raw[key] === 'boolean') hints[key] = raw[key];
  return hints;
}

function actionScore(hints: Hints, traits: ToolTraits): number {
  let score = 0;
  // The spec's defaults: not read-only, destructive, not idempotent, open world.
  if (hints.readOnlyHint !== true) {
    score += 1;
    if (hints.destructiveHint !== false) score += 2;
    if (hints.idempotentHint === true) score -= 1;
  }
  if (hints.openWorldHint !== false) score += 1;
  if (traits.sideEffect === 'remote-write') score += 1;
  if (traits.sideEffect === 'remote-admin') score += 2;
  if (traits.sendsUserData === true) score += 1;
  return Math.max(0, score);
}

const BOILERPLATE = new Set([
  'todo',
  'tbd',
  'description',
  'no description',
  'none',
  'n/a',
  'tool',
  'a tool',
  'test',
  'placeholder',
]);
const MIN_DESCRIPTION = 20;

function documentationGaps(definition: ToolShape, hints: Hints): DocGap[] {
  const gaps: DocGap[] = [];
  if (!isUsefulDescription(definition)) gaps.push('description');
  if (!isPlainObject(definition.inputSchema)) gaps.push('input-schema');
  else if (!mostPropertiesDescribed(definition.inputSchema)) gaps.push('property-docs');
  // Output properties reach the model too, with the result.
  if (isPlainObject(definition.outputSchema) && !mostPropertiesDescribed(definition.outputSchema))
    gaps.push('output-property-docs');
  if (Object.keys(hints).length === 0) gaps.push('annotations');
  return gaps;
}

function isUsefulDescription(definition: ToolShape): boolean {
  const text = typeof definition.description === 'string' ? definition.description.trim() : '';
  if (text.length < MIN_DESCRIPTION) return false;
  const folded = text.toLowerCase().replace(/[.!]+$/, '');
  return !BOILERPLATE.has(folded) && folded !== definition.name.toLowerCase().replace(/[_.-]+/g, ' ');
}

function mostPropertiesDescribed(schema: Record<string, unknown>): boolean {
  const properties = schema.properties;
  if (!isPlainObject(properties)) return true;
  const values = Object.values(properties);
  if (values.length === 0) return true;
  const described = values.filter(
    (p) => isPlainObject(p) && typeof p.description === 'string' && p.description.trim() !== '',
  ).length;
  return described * 2 >= values.length;
}

const IRREVERSIBLE = new Set(['delete', 'drop', 'purge', 'wipe', 'remove']);

function toolFloors(definition: ToolShape, hints: Hints): ToolFloor[] {
  const floors: ToolFloor[] = [];
  if (hasIrreversibleVerb(definition.name)) floors.push(ToolFloor.IRREVERSIBLE_VERB);
  // Read-only and destructive at once is a contradiction: untrusted claims cannot lift the floor.
  if (hints.destructiveHint === true && hints.idempotentHint !== true) {
    floors.push(ToolFloor.DESTRUCTIVE_NOT_IDEMPOTENT);
  }
  const undescribed = typeof definition.description !== 'string' || definition.description.trim() === '';
  if (undescribed && Object.keys(hints).length === 0) floors.push(ToolFloor.UNDOCUMENTED);
  return floors;
}

/** `delete_`, `drop_`, `purge_`, `wipe_`, `remove_` or `force_push` as words of the name, in any case style. */
export function hasIrreversibleVerb(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((word, i) => IRREVERSIBLE.has(word) || (word === 'force' && words[i + 1] === 'push'));
}
