import { PluginModeSchema, ToolSelectorListSchema } from '@sluice/core';
import { z } from 'zod';

const Names = z.array(z.string().min(1).max(256)).min(1).max(256);

/** Which callers a rule speaks of. Every condition given must hold; none given matches every verified caller. */
export const CallerMatch = z
  .object({
    /** The caller holds every one of these scopes. */
    scopes: Names.optional(),
    /** The caller holds at least one of these scopes. */
    anyScope: Names.optional(),
    /** The caller's subject (`sub`, or the API key's name) is one of these. */
    subjects: Names.optional(),
    /** The caller's OAuth client is one of these. */
    clientIds: Names.optional(),
    /** The caller used one of these API keys (by name). */
    keyNames: Names.optional(),
    /**
     * Token claims, each equal to the value or, for an array claim such as
     * `groups`, containing it; a list means any of its values.
     */
    claims: z.record(z.string().min(1).max(128), z.union([z.string(), Names])).optional(),
  })
  .strict();
export type CallerMatch = z.output<typeof CallerMatch>;

export const AuthzRule = z
  .object({
    /** Which callers; omitted, every verified caller. */
    when: CallerMatch.default({}),
    /** The tools this rule grants, as tool selectors (`!` carves out). */
    allow: ToolSelectorListSchema.min(1),
  })
  .strict();
export type AuthzRule = z.output<typeof AuthzRule>;

export const AuthzOptions = z
  .object({
    mode: PluginModeSchema.default('enforce'),
    /** A verified caller may use a tool when any rule that matches the caller grants it. */
    rules: z.array(AuthzRule).max(256).default([]),
    /**
     * Callers without a verified identity: stdio, in-process calls, a listener
     * without authentication. `allow` (default) trusts the process boundary;
     * `deny` refuses them every tool.
     */
    anonymous: z.enum(['allow', 'deny']).default('allow'),
  })
  .strict();
export type AuthzOptions = z.input<typeof AuthzOptions>;
export type ParsedAuthzOptions = z.output<typeof AuthzOptions>;
