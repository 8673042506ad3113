import { PluginModeSchema, ToolSelectorListSchema } from '@sluice/core';
import { z } from 'zod';

const Names = z.array(z.string().min(1).max(256)).min(1).max(256);

/** Which callers a rule speaks of. Every condition given must hold; none given matches every verified caller. */
export const CallerMatch = z
  .object({
    /** The caller holds every one of these scopes. */
    scopes: Names.optional().describe('The caller holds every one of these scopes.'),
    /** The caller holds at least one of these scopes. */
    anyScope: Names.optional().describe('The caller holds at least one of these scopes.'),
    /** The caller's subject (`sub`, or the API key's name) is one of these. */
    subjects: Names.optional().describe("The caller's subject (`sub`, or the API key's name) is one of these."),
    /** The caller's OAuth client is one of these. */
    clientIds: Names.optional().describe("The caller's OAuth client is one of these."),
    /** The caller used one of these API keys (by name). */
    keyNames: Names.optional().describe('The caller used one of these API keys (by name).'),
    /**
     * Token claims, each equal to the value or, for an array claim such as
     * `groups`, containing it; a list means any of its values.
     */
    claims: z
      .record(z.string().min(1).max(128), z.union([z.string(), Names]))
      .optional()
      .describe(
        'Token claims, each equal to the value or, for an array claim such as `groups`, containing it; a list means any of its values.',
      ),
  })
  .strict();
export type CallerMatch = z.output<typeof CallerMatch>;

const UriGlobs = z.array(z.string().min(1).max(2048)).min(1).max(256);

export const AuthzRule = z
  .object({
    /** Which callers; omitted, every verified caller. */
    when: CallerMatch.default({}).describe('Which callers; omitted, every verified caller.'),
    /** The tools this rule grants, as tool selectors (`!` carves out). */
    allow: ToolSelectorListSchema.min(1)
      .optional()
      .describe('The tools this rule grants, as tool selectors (`!` carves out).'),
    /**
     * The resources this rule grants: globs over canonical resource URIs (`file:///public/*`); they also
     * grant a URI template whose text they match, and completions on such URIs and templates.
     */
    resources: UriGlobs.optional().describe(
      'The resources this rule grants: globs over canonical resource URIs (`file:///public/*`); they also grant a URI template whose text they match, and completions on such URIs and templates.',
    ),
    /** The prompts this rule grants, by exposed name, as selectors; they also grant completions on those prompts. */
    prompts: ToolSelectorListSchema.min(1)
      .optional()
      .describe(
        'The prompts this rule grants, by exposed name, as selectors; they also grant completions on those prompts.',
      ),
    /** Upstreams (by name) whose every tool, resource, template, prompt and completion this rule grants. */
    upstreams: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(256)
      .optional()
      .describe('Upstreams (by name) whose every tool, resource, template, prompt and completion this rule grants.'),
  })
  .strict()
  .refine(
    (rule) => rule.allow ?? rule.resources ?? rule.prompts ?? rule.upstreams,
    'a rule grants something: give allow, resources, prompts or upstreams',
  );
export type AuthzRule = z.output<typeof AuthzRule>;

export const AuthzOptions = z
  .object({
    mode: PluginModeSchema.default('enforce'),
    /**
     * A verified caller may use a tool (resource, template, prompt) when any rule that matches the caller grants
     * it, and set the log level of an upstream (`logging/setLevel`) when they grant it anything of that upstream.
     */
    rules: z
      .array(AuthzRule)
      .max(256)
      .default([])
      .describe(
        'A verified caller may use a tool (resource, template, prompt) when any rule that matches the caller grants it, and set the log level of an upstream (`logging/setLevel`) when they grant it anything of that upstream.',
      ),
    /**
     * Callers without a verified identity: stdio, in-process calls, a listener
     * without authentication. `allow` (default) trusts the process boundary;
     * `deny` refuses them every tool.
     */
    anonymous: z
      .enum(['allow', 'deny'])
      .default('allow')
      .describe(
        'Callers without a verified identity: stdio, in-process calls, a listener without authentication. `allow` (default) trusts the process boundary; `deny` refuses them every tool.',
      ),
    /**
     * How a caller is answered for a tool, resource, template or prompt its
     * rules do not grant. `not_found` (default): exactly as for one that does
     * not exist (the same JSON-RPC error, `Unknown tool: "<name>"`, `Resource
     * not found: <uri>`, `Prompt "<name>" not found`), so that a refusal tells
     * nothing of what exists. `forbidden`: a `FORBIDDEN` refusal naming the
     * item and the caller. Either way the log line `authz.forbidden` records it.
     */
    hidden: z
      .enum(['not_found', 'forbidden'])
      .default('not_found')
      .describe(
        'How a caller is answered for a tool, resource, template or prompt its rules do not grant. `not_found` (default): exactly as for one that does not exist (the same JSON-RPC error, `Unknown tool: "<name>"`, `Resource not found: <uri>`, `Prompt "<name>" not found`), so that a refusal tells nothing of what exists. `forbidden`: a `FORBIDDEN` refusal naming the item and the caller. Either way the log line `authz.forbidden` records it.',
      ),
  })
  .strict();
export type AuthzOptions = z.input<typeof AuthzOptions>;
export type ParsedAuthzOptions = z.output<typeof AuthzOptions>;
