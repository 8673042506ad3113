import { canonicalUri, matchGlob, selectTools } from '@sluice/core';
import type { CallerIdentity, RequestKind, ToolMatcher, ToolSubject } from '@sluice/core';
import type { AuthzRule, CallerMatch, ParsedAuthzOptions } from './options.js';

interface CompiledRule {
  readonly when: CallerMatch;
  readonly tools: ToolMatcher | undefined;
  readonly resources: readonly string[] | undefined;
  readonly prompts: ToolMatcher | undefined;
  readonly upstreams: ReadonlySet<string> | undefined;
}

/** One request for something other than a tool, as the policy decides it. */
export interface FeatureRequest {
  readonly kind: Exclude<RequestKind, 'tools/call'>;
  /** The upstream that serves it; undefined for an adopted server's own. */
  readonly upstream: string | undefined;
  /** The canonical URI, URI template or exposed prompt name; undefined for a whole list. */
  readonly target: string | undefined;
  /** On a completion: whether the target is a prompt or a resource (template). */
  readonly completing?: 'prompt' | 'resource' | undefined;
}

/**
 * What one upstream serves now, by the names rules grant: its tools, its
 * listed resources (canonical URIs) and URI templates, and its prompts
 * (exposed names). A new object whenever what it serves changes: the policy
 * remembers its decisions per object.
 */
export interface UpstreamItems {
  readonly upstream: string;
  readonly tools: readonly ToolSubject[];
  readonly resources: readonly string[];
  readonly templates: readonly string[];
  readonly prompts: readonly string[];
}

const PROMPT_KINDS: ReadonlySet<string> = new Set(['prompts/list', 'prompts/get']);

/** A resource glob in the canonical spelling URIs are matched in; a pattern that is no URI stays as written. */
function canonicalPattern(pattern: string): string {
  try {
    return canonicalUri(pattern);
  } catch {
    return pattern;
  }
}

function compile(rule: AuthzRule): CompiledRule {
  return {
    when: rule.when,
    tools: rule.allow ? selectTools(rule.allow) : undefined,
    resources: rule.resources?.map(canonicalPattern),
    prompts: rule.prompts ? selectTools(rule.prompts) : undefined,
    upstreams: rule.upstreams ? new Set(rule.upstreams) : undefined,
  };
}

function grantsTool(rule: CompiledRule, tool: string | ToolSubject): boolean {
  if (rule.tools?.(tool) === true) return true;
  const upstream = typeof tool === 'string' ? undefined : tool.source?.upstream;
  return upstream !== undefined && rule.upstreams?.has(upstream) === true;
}

/** Whether a rule grants a feature request: its upstream, or the item by prompt selectors or resource globs. */
function grantsFeature(rule: CompiledRule, request: FeatureRequest): boolean {
  if (request.upstream !== undefined && rule.upstreams?.has(request.upstream) === true) return true;
  const { target } = request;
  if (target === undefined) return false;
  const prompt = request.completing === undefined ? PROMPT_KINDS.has(request.kind) : request.completing === 'prompt';
  if (prompt) return rule.prompts?.(target) === true;
  return rule.resources?.some((pattern) => matchGlob(pattern, target)) === true;
}

/** Whether a rule grants anything of what an upstream serves: the upstream itself, or one of its items. */
function grantsAnyOf(rule: CompiledRule, items: UpstreamItems): boolean {
  if (rule.upstreams?.has(items.upstream) === true) return true;
  const { tools, prompts, resources } = rule;
  if (tools !== undefined && items.tools.some((tool) => tools(tool))) return true;
  if (prompts !== undefined && items.prompts.some((name) => prompts(name))) return true;
  if (resources === undefined) return false;
  const granted = (item: string) => resources.some((pattern) => matchGlob(pattern, item));
  return items.resources.some(granted) || items.templates.some(granted);
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
  /** The rules that grant anything of an upstream, worked out once per `UpstreamItems`. */
  private readonly granting = new WeakMap<UpstreamItems, ReadonlySet<CompiledRule>>();

  constructor(private readonly options: ParsedAuthzOptions) {
    this.rules = options.rules.map(compile);
  }

  /** Whether the caller may use the tool. An undefined caller is anonymous. */
  allows(caller: CallerIdentity | undefined, tool: string | ToolSubject): boolean {
    if (!caller) return this.options.anonymous === 'allow';
    return this.rulesFor(caller).some((rule) => grantsTool(rule, tool));
  }

  /**
   * Whether the caller may see or use a resource, template, prompt or
   * completion. A rule that names only tools grants none of them.
   */
  allowsFeature(caller: CallerIdentity | undefined, request: FeatureRequest): boolean {
    if (!caller) return this.options.anonymous === 'allow';
    return this.rulesFor(caller).some((rule) => grantsFeature(rule, request));
  }

  /**
   * Whether the caller may set the log level of an upstream (`logging/setLevel`): when its rules grant it
   * anything of what the upstream serves, or the upstream itself. A caller granted nothing there cannot make
   * it log more for everyone. `undefined` items are a server's own handler's: any grant at all admits it.
   */
  allowsLogLevel(caller: CallerIdentity | undefined, items: UpstreamItems | undefined): boolean {
    if (!caller) return this.options.anonymous === 'allow';
    const rules = this.rulesFor(caller);
    if (rules.length === 0 || items === undefined) return rules.length > 0;
    let granting = this.granting.get(items);
    if (granting === undefined) {
      granting = new Set(this.rules.filter((rule) => grantsAnyOf(rule, items)));
      this.granting.set(items, granting);
    }
    const found = granting;
    return rules.some((rule) => found.has(rule));
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
