import { z } from 'zod';
import { PluginModeSchema } from '@sluice/core';
import { TOOL_NAME_PATTERN } from './pattern.js';

const ToolNamePattern = z
  .string()
  .regex(TOOL_NAME_PATTERN, 'must be a tool name, or a pattern of tool-name characters with "*" and "?"');

/** Largest queue one tool may have: a bound on the memory a flood can take. */
export const MAX_QUEUE = 1_000_000;

/** The limit of one tool: how many calls run at once and how many may wait. */
export const LimitOptions = z
  .object({
    maxActive: z.number().int().min(1),
    maxQueue: z.number().int().min(0).max(MAX_QUEUE).default(0),
  })
  .strict();

/** Argument fields that make up a lock key: top-level names only. */
export const KeyArgs = z.array(z.string().min(1).max(128)).max(16);

export const MutexOptions = z
  .object({
    /** Tools treated as destructive whatever their annotations say. */
    destructive: z.array(ToolNamePattern).default([]),
    /** Tools never serialized by annotation or default (a `destructive` pattern or policy still wins). */
    exempt: z.array(ToolNamePattern).default([]),
    /** Argument fields in the lock key of every destructive tool. Default none: one lock per tool. */
    keyArgs: KeyArgs.default([]),
    /** Argument fields in the lock key, by tool name or pattern. */
    tools: z.record(ToolNamePattern, z.object({ keyArgs: KeyArgs }).strict()).default({}),
  })
  .strict();

export const ConcurrencyOptions = z
  .object({
    /** The limit of every tool that has none of its own. */
    default: LimitOptions.optional(),
    /** Limits by tool name or pattern: the way to limit imported tools. */
    tools: z.record(ToolNamePattern, LimitOptions).default({}),
    /** The intent mutex for destructive tools; `false` turns it off. */
    mutex: z.union([z.literal(false), MutexOptions]).prefault({}),
    /** The `retryAfterMs` a shed call is told. */
    retryAfterMs: z.number().int().min(0).max(3_600_000).default(1000),
    mode: PluginModeSchema.default('enforce'),
  })
  .strict();

/** What `concurrency()` accepts. */
export type ConcurrencyOptions = z.input<typeof ConcurrencyOptions>;
/** The options after defaults. */
export type ConcurrencyConfig = z.output<typeof ConcurrencyOptions>;
export type LimitOptions = z.input<typeof LimitOptions>;
export type Limit = z.output<typeof LimitOptions>;
export type MutexOptions = z.input<typeof MutexOptions>;
export type MutexConfig = z.output<typeof MutexOptions>;
