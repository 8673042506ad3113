import { UriTemplate } from '@modelcontextprotocol/server';
import type { Resource, ResourceTemplateType } from '@modelcontextprotocol/server';
import { messageOf } from '@sluice/core';

/** Two upstreams claiming the same resource URI, or overlapping templates. */
export interface ResourceConflict {
  readonly kind: 'resource' | 'template';
  /** The URI or URI template in question. */
  readonly id: string;
  /** The upstream that claimed it first and keeps it. */
  readonly owner: string;
  /** The upstream whose claim was refused. */
  readonly claimant: string;
  readonly reason: string;
}

/** What one upstream may expose after its claims were checked against the others'. */
export interface Claimed {
  readonly resources: Resource[];
  readonly templates: ResourceTemplateType[];
  readonly conflicts: ResourceConflict[];
}

interface TemplateClaim {
  readonly owner: string;
  readonly template: string;
  readonly matcher: UriTemplate;
  /** The literal text before the first expression. */
  readonly prefix: string;
}

/**
 * Which upstream owns which resource URI. URIs are not renamed (a model may
 * quote them), so `resources/read` is routed by owner: the upstream that
 * listed the URI, else the one whose template matches it. A URI listed by
 * two upstreams, a URI one upstream lists that another's template matches,
 * and two templates that can match the same URI (one's literal prefix
 * starts the other's) are conflicts: the first claimant keeps the URI or
 * template, and the later claim is refused and reported with both names.
 */
export class ResourceRouter {
  private readonly uris = new Map<string, string>();
  private readonly templates: TemplateClaim[] = [];

  /** Replaces what `owner` claims. */
  claim(owner: string, resources: readonly Resource[], templates: readonly ResourceTemplateType[]): Claimed {
    this.release(owner);
    const conflicts: ResourceConflict[] = [];
    const keptTemplates: ResourceTemplateType[] = [];
    const mine: TemplateClaim[] = [];
    for (const template of templates) {
      const claim = compile(owner, template.uriTemplate);
      if (typeof claim === 'string') {
        conflicts.push({ kind: 'template', id: template.uriTemplate, owner, claimant: owner, reason: claim });
        continue;
      }
      const other = this.templates.find((t) => t.owner !== owner && overlaps(t.prefix, claim.prefix));
      if (other !== undefined) {
        conflicts.push(templateConflict(template.uriTemplate, other, owner));
        continue;
      }
      mine.push(claim);
      keptTemplates.push(template);
    }
    const keptResources: Resource[] = [];
    for (const resource of resources) {
      const holder = this.uris.get(resource.uri);
      const matching = holder === undefined ? this.templates.find((t) => matches(t.matcher, resource.uri)) : undefined;
      if (holder !== undefined && holder !== owner) {
        conflicts.push({
          kind: 'resource',
          id: resource.uri,
          owner: holder,
          claimant: owner,
          reason: `Resource "${resource.uri}" is listed by upstreams "${holder}" and "${owner}"; "${holder}" keeps it`,
        });
        continue;
      }
      if (matching !== undefined) {
        conflicts.push({
          kind: 'resource',
          id: resource.uri,
          owner: matching.owner,
          claimant: owner,
          reason: `Resource "${resource.uri}" of upstream "${owner}" matches the template "${matching.template}" of upstream "${matching.owner}", which keeps it`,
        });
        continue;
      }
      this.uris.set(resource.uri, owner);
      keptResources.push(resource);
    }
    // A template of this upstream that matches a URI another upstream already lists would route that URI ambiguously.
    for (const claim of [...mine]) {
      const taken = [...this.uris].find(([uri, holder]) => holder !== owner && matches(claim.matcher, uri));
      if (taken === undefined) continue;
      mine.splice(mine.indexOf(claim), 1);
      keptTemplates.splice(
        keptTemplates.findIndex((t) => t.uriTemplate === claim.template),
        1,
      );
      conflicts.push({
        kind: 'template',
        id: claim.template,
        owner: taken[1],
        claimant: owner,
        reason: `Template "${claim.template}" of upstream "${owner}" matches "${taken[0]}", which upstream "${taken[1]}" lists and keeps`,
      });
    }
    this.templates.push(...mine);
    return { resources: keptResources, templates: keptTemplates, conflicts };
  }

  /** Forgets what `owner` claimed. */
  release(owner: string): void {
    for (const [uri, holder] of this.uris) if (holder === owner) this.uris.delete(uri);
    const kept = this.templates.filter((t) => t.owner !== owner);
    this.templates.splice(0, this.templates.length, ...kept);
  }

  /** The upstream that owns a URI: the one that listed it, else the one whose template matches it. */
  ownerOf(uri: string): string | undefined {
    return this.uris.get(uri) ?? this.templates.find((t) => matches(t.matcher, uri))?.owner;
  }

  /** The upstream that lists a URI template (for `completion/complete` on a resource reference). */
  ownerOfTemplate(template: string): string | undefined {
    return this.templates.find((t) => t.template === template)?.owner ?? this.uris.get(template);
  }
}

function compile(owner: string, template: string): TemplateClaim | string {
  try {
    const matcher = new UriTemplate(template);
    const brace = template.indexOf('{');
    return { owner, template, matcher, prefix: brace === -1 ? template : template.slice(0, brace) };
  } catch (error) {
    return `Upstream "${owner}" lists an invalid URI template ${JSON.stringify(template.slice(0, 200))}: ${messageOf(error)}`;
  }
}

function overlaps(a: string, b: string): boolean {
  return a.startsWith(b) || b.startsWith(a);
}

function templateConflict(template: string, other: TemplateClaim, claimant: string): ResourceConflict {
  return {
    kind: 'template',
    id: template,
    owner: other.owner,
    claimant,
    reason: `Template "${template}" of upstream "${claimant}" overlaps the template "${other.template}" of upstream "${other.owner}", which keeps it`,
  };
}

/**
 * Whether a template an upstream listed matches a URI. The SDK's matcher
 * throws on some templates a hostile upstream can list (`{}` against a
 * blank URI): such a template matches nothing.
 */
function matches(matcher: { match(uri: string): unknown }, uri: string): boolean {
  try {
    return matcher.match(uri) !== null;
  } catch {
    return false;
  }
}
