import type { ServerContext } from '@sluice/core';
import type { RiskLevel } from '../scoring/levels.js';
import { LEVEL_LABELS } from '../scoring/levels.js';

/** What `elicitInput` takes, as the core's SDK types it. */
export type ElicitParams = Parameters<ServerContext['mcpReq']['elicitInput']>[0];

/** The key of the one embedded request in a 2026-07-28 approval round. */
export const APPROVAL_INPUT_KEY = 'sluice_approval';

/** The one field of the form: a yes/no. Never anything a person could type a secret into. */
export const APPROVE_FIELD = 'approve';

// Characters that hide or reorder text: arguments are the model's words, shown to a person deciding.
const DECEPTIVE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/** What the person reads: the tool, where it comes from, its risk, and its arguments (capped). */
export interface ApprovalSubject {
  readonly tool: string;
  /** The upstream's configured name; absent for the server's own tools. */
  readonly upstream?: string;
  readonly level: RiskLevel;
  readonly args: Readonly<Record<string, unknown>>;
}

/**
 * The sentence a person approves or declines, or undefined when the
 * arguments cannot all be shown within `maxArgumentChars`: then nobody is
 * asked, since approving what one cannot see is no approval.
 */
export function approvalMessage(
  subject: ApprovalSubject,
  maxArgumentChars: number,
  mask: (text: string) => string,
): string | undefined {
  const from = subject.upstream === undefined ? '' : ` from upstream "${subject.upstream}"`;
  const args = showArguments(subject.args, maxArgumentChars, mask);
  if (args === undefined) return undefined;
  return `Allow the tool "${subject.tool}"${from} to run? Risk ${subject.level} (${LEVEL_LABELS[subject.level]}). Arguments: ${args}`;
}

/** The fewest characters of a value shown when values are shortened; less would show nothing useful. */
const MIN_VALUE_CHARS = 12;
/** A path longer than this (a key the model invented) is itself shortened. */
const MAX_PATH_CHARS = 80;

const spell = (text: string): string =>
  text.replace(DECEPTIVE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * Every argument, masked, invisible characters spelled out, within about
 * `max` characters. Arguments that fit are shown as JSON. Otherwise each
 * value (down to nested fields) is shown on its own, each long one
 * shortened by the same amount, so that a field after a long one is never
 * cut off. Undefined when even that cannot fit: too many fields.
 */
export function showArguments(
  args: Readonly<Record<string, unknown>>,
  max: number,
  mask: (text: string) => string,
): string | undefined {
  let whole: string;
  try {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, functions, symbols and a toJSON() that returns nothing
    whole = JSON.stringify(args) ?? '{}';
  } catch {
    return '(arguments that cannot be shown)';
  }
  whole = spell(mask(whole));
  if (whole.length <= max) return whole;
  const fields = leaves(args, Math.floor(max / MIN_VALUE_CHARS) + 1);
  if (fields === undefined) return undefined;
  const paths = fields.map(([path]) => {
    const shown = spell(mask(path));
    return shown.length <= MAX_PATH_CHARS ? shown : `${shown.slice(0, MAX_PATH_CHARS - 1)}…`;
  });
  // Each field costs its path, ": " and "; " besides its value.
  const forValues = max - paths.reduce((sum, path) => sum + path.length + 4, 0);
  const per = Math.floor(forValues / fields.length);
  if (per < MIN_VALUE_CHARS) return undefined;
  return fields
    .map(([, value], i) => {
      const text = spell(mask(value));
      const shown = text.length <= per ? text : `${text.slice(0, per - 1)}…`;
      return `${paths[i]}: ${shown}`;
    })
    .join('; ');
}

/**
 * The leaf values of the arguments as `[path, JSON]`, in order; empty
 * objects and arrays count as leaves. Undefined past `limit` leaves.
 */
function leaves(args: Readonly<Record<string, unknown>>, limit: number): [string, string][] | undefined {
  const out: [string, string][] = [];
  const stack: [string, unknown][] = Object.entries(args)
    .reverse()
    .map(([key, value]) => [key, value]);
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [path, value] = top;
    const entries =
      typeof value === 'object' && value !== null
        ? Array.isArray(value)
          ? value.map((item, i): [string, unknown] => [`${path}[${i}]`, item])
          : Object.entries(value).map(([key, item]): [string, unknown] => [`${path}.${key}`, item])
        : [];
    if (entries.length > 0) {
      stack.push(...entries.reverse());
      continue;
    }
    if (out.length >= limit) return undefined;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, functions, symbols and a toJSON() that returns nothing
    out.push([path, JSON.stringify(value) ?? String(value)]);
  }
  return out;
}

/** The arguments as JSON, secrets masked, invisible characters spelled out, cut at `max` characters. */
export function summarize(
  args: Readonly<Record<string, unknown>>,
  max: number,
  mask: (text: string) => string,
): string {
  let text: string;
  try {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, functions, symbols and a toJSON() that returns nothing
    text = JSON.stringify(args) ?? '{}';
  } catch {
    text = '(arguments that cannot be shown)';
  }
  text = mask(text).replace(DECEPTIVE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** The elicitation form: the message and one boolean. */
export function approvalForm(message: string): ElicitParams {
  return {
    mode: 'form',
    message,
    requestedSchema: {
      type: 'object',
      properties: {
        [APPROVE_FIELD]: {
          type: 'boolean',
          title: 'Approve this call',
          description: 'Yes runs the tool with these arguments; no refuses it.',
          default: false,
        },
      },
      required: [APPROVE_FIELD],
    },
  };
}
