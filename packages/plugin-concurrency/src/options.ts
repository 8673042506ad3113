import { z } from 'zod/v4';
import { PluginModeSchema, ToolSelectorListSchema, ToolSelectorSchema } from '@sluice/core';

/** Largest queue one tool may have: a bound on the memory a flood can take. */
export const MAX_QUEUE = 1_000_000;

/** Most entries in `resources` or `prompts`: each is tested in turn on a request. */
export const MAX_TARGETS = 256;

/** The limit of one tool: how many calls run at once and how many may wait. */
export const LimitOptions = z
  .object({
    /** Calls of the tool running at once (per caller when `per` is `'caller'`). */
    maxActive: z
      .number()
      .int()
      .min(1)
      .describe("Calls of the tool running at once (per caller when `per` is `'caller'`)."),
    /** Calls that may wait for a slot; one more is refused with `SERVER_BUSY`. */
    maxQueue: z
      .number()
      .int()
      .min(0)
      .max(MAX_QUEUE)
      .default(0)
      .describe('Calls that may wait for a slot; one more is refused with `SERVER_BUSY`.'),
    /**
     * `'tool'` (default): one set of slots for everyone. `'caller'`: each
     * verified caller (`ctx.auth.subject`) gets its own `maxActive`/`maxQueue`,
     * so one caller cannot take every slot; unauthenticated calls share one set.
     */
    per: z
      .enum(['tool', 'caller'])
      .optional()
      .describe(
        "`'tool'` (default): one set of slots for everyone. `'caller'`: each verified caller (`ctx.auth.subject`) gets its own `maxActive`/`maxQueue`, so one caller cannot take every slot; unauthenticated calls share one set.",
      ),
    /**
     * Calls admitted per fixed window (per caller when `per` is `'caller'`);
     * past it a call is refused with `RATE_LIMITED` until the window ends.
     */
    rate: z
      .object({
        /** Calls admitted in one window. */
        calls: z.number().int().min(1).describe('Calls admitted in one window.'),
        /** The window's length, in ms. */
        perMs: z.number().int().min(10).max(86_400_000).describe("The window's length, in ms."),
      })
      .strict()
      .optional()
      .describe(
        "Calls admitted per fixed window (per caller when `per` is `'caller'`); past it a call is refused with `RATE_LIMITED` until the window ends.",
      ),
  })
  .strict();

/** Argument fields that make up a lock key: top-level names only. */
export const KeyArgs = z.array(z.string().min(1).max(128)).max(16);

export const MutexOptions = z
  .object({
    /** Tool selectors: tools treated as destructive whatever their annotations say. */
    destructive: ToolSelectorListSchema.default([]).describe(
      'Tool selectors: tools treated as destructive whatever their annotations say.',
    ),
    /** Tool selectors: tools never serialized by annotation (a `destructive` selector or policy still wins). */
    exempt: ToolSelectorListSchema.default([]).describe(
      'Tool selectors: tools never serialized by annotation (a `destructive` selector or policy still wins).',
    ),
    /**
     * How trusted annotations mark a tool destructive. `'explicit'`: only
     * `destructiveHint: true` (without `readOnlyHint: true`) does.
     * `'spec-defaults'`: read by the specification's defaults, so a tool is
     * destructive unless it says `readOnlyHint: true` or `destructiveHint: false`,
     * and a tool with no annotations is destructive.
     */
    annotations: z
      .enum(['explicit', 'spec-defaults'])
      .default('explicit')
      .describe(
        "How trusted annotations mark a tool destructive. `'explicit'`: only `destructiveHint: true` (without `readOnlyHint: true`) does. `'spec-defaults'`: read by the specification's defaults, so a tool is destructive unless it says `readOnlyHint: true` or `destructiveHint: false`, and a tool with no annotations is destructive.",
      ),
    /** Argument fields in the lock key of every destructive tool. Default none: one lock per tool. */
    keyArgs: KeyArgs.default([]).describe(
      'Argument fields in the lock key of every destructive tool. Default none: one lock per tool.',
    ),
    /** Argument fields in the lock key, by tool selector. */
    tools: z
      .record(
        ToolSelectorSchema,
        z
          .object({
            /** The arguments whose values name the resource a call acts on (one lock per distinct value). */
            keyArgs: KeyArgs.describe(
              'The arguments whose values name the resource a call acts on (one lock per distinct value).',
            ),
          })
          .strict(),
      )
      .default({})
      .describe('Argument fields in the lock key, by tool selector.'),
  })
  .strict();

export const ConcurrencyOptions = z
  .object({
    /** The limit of every tool that has none of its own. */
    default: LimitOptions.optional().describe('The limit of every tool that has none of its own.'),
    /** Limits by tool selector: the way to limit imported tools. */
    tools: z
      .record(ToolSelectorSchema, LimitOptions)
      .default({})
      .describe('Limits by tool selector: the way to limit imported tools.'),
    /**
     * Limits by request kind for what is not a tool call (`resources/read`, `resources/subscribe`,
     * `prompts/get`, `completion/complete`, `logging/setLevel`): one set of slots per kind and upstream (a
     * setLevel takes one of each upstream that logs). A kind without one takes `default`; `false` leaves the
     * kind unguarded.
     */
    requests: z
      .partialRecord(
        z.enum(['resources/read', 'resources/subscribe', 'prompts/get', 'completion/complete', 'logging/setLevel']),
        z.union([z.literal(false), LimitOptions]),
      )
      .default({})
      .describe(
        'Limits by request kind for what is not a tool call (`resources/read`, `resources/subscribe`, `prompts/get`, `completion/complete`, `logging/setLevel`): one set of slots per kind and upstream (a setLevel takes one of each upstream that logs). A kind without one takes `default`; `false` leaves the kind unguarded.',
      ),
    /**
     * Limits by resource URI glob (`file:///reports/*`), compared with the canonical URI, for `resources/read`
     * and `resources/subscribe`: one set of slots per glob, kind and upstream. The first glob (in the order
     * written) that matches decides; `false` leaves the URIs it matches to the kind's setting.
     */
    resources: z
      .record(z.string().min(1).max(2048), z.union([z.literal(false), LimitOptions]))
      .refine((globs) => Object.keys(globs).length <= MAX_TARGETS, `at most ${MAX_TARGETS} globs`)
      .default({})
      .describe(
        "Limits by resource URI glob (`file:///reports/*`), compared with the canonical URI, for `resources/read` and `resources/subscribe`: one set of slots per glob, kind and upstream. The first glob (in the order written) that matches decides; `false` leaves the URIs it matches to the kind's setting.",
      ),
    /**
     * Limits by prompt selector over exposed prompt names (`greet`, `github_*`), for `prompts/get`: one set of
     * slots per selector and upstream. The first selector that matches decides; `false` leaves the prompts it
     * matches to the kind's setting.
     */
    prompts: z
      .record(ToolSelectorSchema, z.union([z.literal(false), LimitOptions]))
      .refine((selectors) => Object.keys(selectors).length <= MAX_TARGETS, `at most ${MAX_TARGETS} selectors`)
      .default({})
      .describe(
        "Limits by prompt selector over exposed prompt names (`greet`, `github_*`), for `prompts/get`: one set of slots per selector and upstream. The first selector that matches decides; `false` leaves the prompts it matches to the kind's setting.",
      ),
    /** The intent mutex for destructive tools; `false` turns it off. */
    mutex: z
      .union([z.literal(false), MutexOptions])
      .prefault({})
      .describe('The intent mutex for destructive tools; `false` turns it off.'),
    /** The `retryAfterMs` a shed call is told. */
    retryAfterMs: z
      .number()
      .int()
      .min(0)
      .max(3_600_000)
      .default(1000)
      .describe('The `retryAfterMs` a shed call is told.'),
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
