import { RiskErrorCode } from '../errors.js';
import { PoisonPattern } from '../scan/patterns.js';
import type { ScanHit } from '../scan/scanner.js';

/** The composition shadowing rules; a violation keeps the tool out. */
export type ShadowingRule =
  | typeof RiskErrorCode.R1_ALIAS_COLLISION
  | typeof RiskErrorCode.R2_CROSS_SERVER_REFERENCE
  | typeof RiskErrorCode.R3_SELF_SCOPE_VIOLATION;

export interface ShadowingViolation {
  readonly rule: ShadowingRule;
  readonly message: string;
}

/** What the rules know about the tools already exposed. */
export interface ExposureView {
  /** The source (upstream name, or `local`) exposing a name, looked up by `aliasKey`. */
  ownerOfAlias(alias: string): { readonly name: string; readonly server: string } | undefined;
  /** The source exposing a tool of this name (exposed or upstream name). */
  ownerOfTool(name: string): string | undefined;
  /** The configured names of every upstream. */
  readonly serverIds: Iterable<string>;
}

export interface ShadowingSubject {
  readonly name: string;
  /** The upstream's configured name, or `local`. */
  readonly server: string;
  readonly description: string | undefined;
  readonly hits: readonly ScanHit[];
}

export interface ShadowingRules {
  readonly aliasCollision: boolean;
  readonly crossServerReference: boolean;
  readonly selfScope: boolean;
}

/**
 * Two names a model may take for one another: case, and the separators
 * `-`, `_` and `.`, do not tell them apart.
 */
export function aliasKey(name: string): string {
  return name.toLowerCase().replace(/[-.]/g, '_');
}

/** The first rule the tool violates, if any. */
export function checkShadowing(
  subject: ShadowingSubject,
  view: ExposureView,
  rules: ShadowingRules,
): ShadowingViolation | undefined {
  if (rules.aliasCollision) {
    const owner = view.ownerOfAlias(aliasKey(subject.name));
    if (owner && owner.server !== subject.server) {
      return {
        rule: RiskErrorCode.R1_ALIAS_COLLISION,
        message: `"${subject.name}" collides with "${owner.name}", already exposed by ${describe(owner.server)}`,
      };
    }
  }
  if (rules.crossServerReference) {
    const reference = subject.hits.find(
      // The strict reading (with concealment or exfiltration wording) is what refuses; the seed's looser one only warns.
      (hit) =>
        hit.pattern === PoisonPattern.CROSS_SERVER_IMPERATIVE &&
        hit.severity === 'high' &&
        crossesServer(hit, subject, view),
    );
    if (reference) {
      const owner = view.ownerOfTool(reference.target as string) as string;
      return {
        rule: RiskErrorCode.R2_CROSS_SERVER_REFERENCE,
        message: `the description of "${subject.name}" directs calls to "${reference.target}" of ${describe(owner)}, with concealment or exfiltration wording`,
      };
    }
  }
  if (rules.selfScope && subject.description !== undefined) {
    const named = namedServer(subject.description, subject.server, view.serverIds);
    if (named !== undefined) {
      return {
        rule: RiskErrorCode.R3_SELF_SCOPE_VIOLATION,
        message: `the description of "${subject.name}" (upstream "${subject.server}") names the upstream "${named}" as a server or namespace`,
      };
    }
  }
  return undefined;
}

function crossesServer(hit: ScanHit, subject: ShadowingSubject, view: ExposureView): boolean {
  if (hit.target === undefined) return false;
  const owner = view.ownerOfTool(hit.target);
  return owner !== undefined && owner !== subject.server;
}

function describe(server: string): string {
  return server === 'local' ? 'this server' : `upstream "${server}"`;
}

const SCOPE_WORDS = new Set([
  'server',
  'servers',
  'tool',
  'tools',
  'upstream',
  'upstreams',
  'mcp',
  'connection',
  'plugin',
  'namespace',
]);

/**
 * Another upstream's configured name used as a scope: followed by a word such
 * as "server" or "tools", preceded by "server" or "upstream", or used as a
 * namespace (`other.tool`, `other/tool`, `other:tool`). A bare word that
 * happens to equal a server name ("git refs") does not count.
 */
export function namedServer(description: string, own: string, serverIds: Iterable<string>): string | undefined {
  const lower = description.toLowerCase();
  for (const id of serverIds) {
    const needle = id.toLowerCase();
    if (needle === own.toLowerCase() || needle.length < 3) continue;
    for (let at = lower.indexOf(needle); at !== -1; at = lower.indexOf(needle, at + 1)) {
      const end = at + needle.length;
      if (!isBoundary(lower, at - 1) || !isBoundary(lower, end)) continue;
      if (usedAsScope(lower, at, end)) return id;
    }
  }
  return undefined;
}

function usedAsScope(lower: string, start: number, end: number): boolean {
  const separator = lower.charCodeAt(end);
  if ((separator === 46 || separator === 47 || separator === 58) && isWordChar(lower.charCodeAt(end + 1))) return true; // . / :
  const next = /^[\s"'`]*([a-z]+)/.exec(lower.slice(end, end + 24))?.[1];
  if (next !== undefined && SCOPE_WORDS.has(next)) return true;
  const previous = /([a-z]+)[\s"'`]*$/.exec(lower.slice(Math.max(0, start - 24), start))?.[1];
  return previous === 'server' || previous === 'upstream';
}

function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 45;
}

function isBoundary(lower: string, index: number): boolean {
  return index < 0 || index >= lower.length || !isWordChar(lower.charCodeAt(index));
}
