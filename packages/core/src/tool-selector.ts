import { z } from 'zod/v4';
import { CoreErrorCode, SluiceError } from './errors.js';
import { isGlob, matchGlob } from './glob.js';

/**
 * Tool selectors: the one syntax every setting uses to say which tools it
 * applies to (see "Selecting tools" in core's README).
 *
 *   [!][upstream/]glob
 *
 * The glob is made of tool-name characters (letters, digits, `_`, `-`, `.`)
 * with `*` (any run, none included) and `?` (one character). Without a
 * qualifier it is matched against the subject's name (usually the name
 * clients see); with `upstream/` it selects only tools imported from an
 * upstream whose configured name matches `upstream`, and is matched against
 * the tool's name at that upstream. A leading `!` excludes. Matching is
 * case-sensitive unless `ignoreCase` is set, which folds ASCII letters only.
 * Matching walks the strings with core's glob matcher: no regular expression
 * is ever built from a selector.
 */

/** Characters of a tool name (the MCP specification's set). */
const NAME_CHARS = /^[A-Za-z0-9_.-]$/;
/** The longest glob part: a tool name is at most 128 characters, wildcards make room for more. */
export const MAX_SELECTOR_GLOB = 256;
/** The longest upstream qualifier (upstream names are at most 64 characters). */
export const MAX_SELECTOR_UPSTREAM = 64;

/** What a selector is matched against. A `SluiceTool` is one. */
export interface ToolSubject {
  /** Matched by unqualified selectors: the exposed name, or whatever name the caller chooses. */
  readonly name: string;
  /** For imported tools: the upstream's configured name and the tool's name there, read by `upstream/` selectors. */
  readonly source?: { readonly kind: string; readonly upstream?: string; readonly originalName?: string };
}

/** How selectors compare names. */
export interface SelectorOptions {
  /** Fold ASCII letters (A-Z) on both sides. Default false: `Search` does not select `search`. */
  readonly ignoreCase?: boolean;
}

/** One selector, parsed. */
export interface ParsedToolSelector {
  readonly text: string;
  readonly exclude: boolean;
  /** The upstream qualifier, a glob; undefined when the selector has none. */
  readonly upstream: string | undefined;
  readonly glob: string;
}

/** Whether a list of selectors selects a tool; a bare string is a subject with only a name. */
export type ToolMatcher = (subject: string | ToolSubject) => boolean;

function globProblem(part: string, what: string, max: number): string | undefined {
  if (part.length === 0) return `the ${what} is empty`;
  if (part.length > max) return `the ${what} is longer than ${max} characters`;
  for (const char of part) {
    if (char !== '*' && char !== '?' && !NAME_CHARS.test(char))
      return `the ${what} has ${JSON.stringify(char)}; use letters, digits, "_", "-", ".", "*" or "?"`;
  }
  return undefined;
}

/** What is wrong with a selector, or undefined if it is well formed. */
export function selectorProblem(text: string): string | undefined {
  const body = text.startsWith('!') ? text.slice(1) : text;
  const slash = body.indexOf('/');
  if (slash === -1) return globProblem(body, 'tool-name glob', MAX_SELECTOR_GLOB);
  if (body.indexOf('/', slash + 1) !== -1) return 'use at most one "/" (upstream/glob)';
  return (
    globProblem(body.slice(0, slash), 'upstream qualifier', MAX_SELECTOR_UPSTREAM) ??
    globProblem(body.slice(slash + 1), 'tool-name glob', MAX_SELECTOR_GLOB)
  );
}

function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/** Parses one selector; a malformed one throws `INVALID_OPTIONS` saying what is wrong. */
export function parseToolSelector(text: string): ParsedToolSelector {
  const problem = typeof text === 'string' ? selectorProblem(text) : 'a selector is a string';
  if (problem !== undefined)
    throw new SluiceError(CoreErrorCode.INVALID_OPTIONS, `Invalid tool selector ${preview(text)}: ${problem}`);
  const exclude = text.startsWith('!');
  const body = exclude ? text.slice(1) : text;
  const slash = body.indexOf('/');
  return {
    text,
    exclude,
    upstream: slash === -1 ? undefined : body.slice(0, slash),
    glob: slash === -1 ? body : body.slice(slash + 1),
  };
}

/** Whether a selector names one tool by its exact name: no `!`, qualifier or wildcard. */
export function isExactSelector(selector: ParsedToolSelector): boolean {
  return !selector.exclude && selector.upstream === undefined && !isGlob(selector.glob);
}

/** Whether the selector's pattern (its `!` set aside) matches the subject. */
function patternMatches(selector: ParsedToolSelector, subject: ToolSubject, ignoreCase: boolean): boolean {
  if (selector.upstream === undefined) return matchGlob(selector.glob, subject.name, ignoreCase);
  const source = subject.source;
  if (source?.upstream === undefined || source.originalName === undefined) return false;
  return (
    matchGlob(selector.upstream, source.upstream, ignoreCase) &&
    matchGlob(selector.glob, source.originalName, ignoreCase)
  );
}

function asSubject(subject: string | ToolSubject): ToolSubject {
  return typeof subject === 'string' ? { name: subject } : subject;
}

/** Whether one selector selects the subject: its pattern matches, or, for `!pattern`, does not. */
export function selects(
  selector: ParsedToolSelector,
  subject: string | ToolSubject,
  options: SelectorOptions = {},
): boolean {
  return patternMatches(selector, asSubject(subject), options.ignoreCase === true) !== selector.exclude;
}

/**
 * Compiles a list of selectors once. A tool is selected when some selector
 * without `!` matches it and no `!` selector does; a list of only `!`
 * selectors selects every other tool; an empty list selects none.
 */
export function selectTools(selectors: readonly string[], options: SelectorOptions = {}): ToolMatcher {
  const ignoreCase = options.ignoreCase === true;
  const parsed = selectors.map(parseToolSelector);
  const include = parsed.filter((s) => !s.exclude);
  const exclude = parsed.filter((s) => s.exclude);
  if (include.length === 0 && exclude.length === 0) return () => false;
  const includeAll = include.length === 0 || include.some((s) => s.upstream === undefined && s.glob === '*');
  return (raw) => {
    const subject = asSubject(raw);
    if (!includeAll && !include.some((s) => patternMatches(s, subject, ignoreCase))) return false;
    return !exclude.some((s) => patternMatches(s, subject, ignoreCase));
  };
}

/** One selector, checked: for option schemas. Errors say what is wrong with it. */
export const ToolSelectorSchema = z.string().superRefine((text, ctx) => {
  const problem = selectorProblem(text);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `not a tool selector: ${problem}` });
});

/** A list of selectors (at most 256), for option schemas. */
export const ToolSelectorListSchema = z.array(ToolSelectorSchema).max(256);
