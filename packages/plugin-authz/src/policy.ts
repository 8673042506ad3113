import { selectTools } from '@sluice/core';
import type { CallerIdentity, ToolMatcher, ToolSubject } from '@sluice/core';
import type { CallerMatch, ParsedAuthzOptions } from './options.js';

interface CompiledRule {
  readonly when: CallerMatch;
  readonly allows: ToolMatcher;
}

const oneOf = (wanted: readonly string[] | undefined, actual: string | undefined): boolean =>
  wanted === undefined || (actual !== undefined && wanted.includes(actual));

function claimHolds(actual: unknown, wanted: string | readonly string[]): boolean {
  const values = typeof wanted === 'string' ? [wanted] : wanted;
  if (typeof actual === 'string') return values.includes(actual);
  return Array.isArray(actual) && actual.some((v) => typeof v === 'string' && values.includes(v));
}

/** Whether every condition of `when` holds for the caller. */
export function callerMatches(when: CallerMatch, caller: CallerIdentity): boolean {
  const scopes = new Set(caller.scopes);
  if (when.scopes && !when.scopes.every((s) => scopes.has(s))) return false;
  if (when.anyScope && !when.anyScope.some((s) => scopes.has(s))) return false;
  if (!oneOf(when.subjects, caller.subject)) return false;
  if (!oneOf(when.clientIds, caller.clientId)) return false;
  if (!oneOf(when.keyNames, caller.keyName)) return false;
  if (when.claims) {
    const claims = caller.claims ?? {};
    for (const [name, wanted] of Object.entries(when.claims)) {
      if (!Object.hasOwn(claims, name) || !claimHolds(claims[name], wanted)) return false;
    }
  }
  return true;
}

/**
 * The compiled policy: rules' selectors are compiled once; a decision walks
 * the rules that match the caller. Callers are few and repeat, so the rules
 * matching each identity object are remembered for as long as it lives.
 */
export class AuthzPolicy {
  private readonly rules: readonly CompiledRule[];
  private readonly matching = new WeakMap<CallerIdentity, readonly CompiledRule[]>();

  constructor(private readonly options: ParsedAuthzOptions) {
    this.rules = options.rules.map((rule) => ({ when: rule.when, allows: selectTools(rule.allow) }));
  }

  /** Whether the caller may use the tool. An undefined caller is anonymous. */
  allows(caller: CallerIdentity | undefined, tool: string | ToolSubject): boolean {
    if (!caller) return this.options.anonymous === 'allow';
    return this.rulesFor(caller).some((rule) => rule.allows(tool));
  }

  private rulesFor(caller: CallerIdentity): readonly CompiledRule[] {
    let rules = this.matching.get(caller);
    if (!rules) {
      rules = this.rules.filter((rule) => callerMatches(rule.when, caller));
      this.matching.set(caller, rules);
    }
    return rules;
  }
}
