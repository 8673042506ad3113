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

/** The sentence a person approves or declines. */
export function approvalMessage(
  subject: ApprovalSubject,
  maxArgumentChars: number,
  mask: (text: string) => string,
): string {
  const from = subject.upstream === undefined ? '' : ` from upstream "${subject.upstream}"`;
  const args = summarize(subject.args, maxArgumentChars, mask);
  return `Allow the tool "${subject.tool}"${from} to run? Risk ${subject.level} (${LEVEL_LABELS[subject.level]}). Arguments: ${args}`;
}

/** The arguments as JSON, secrets masked, invisible characters spelled out, cut at `max` characters. */
export function summarize(
  args: Readonly<Record<string, unknown>>,
  max: number,
  mask: (text: string) => string,
): string {
  let text: string;
  try {
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
