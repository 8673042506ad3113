import { z } from 'zod';
import { SluiceError } from '@sluice/core';
import type { SluiceTool } from '@sluice/core';
import type { DestructiveRules } from './destructive.js';
import { ConcurrencyErrorCode } from './errors.js';
import { isDestructive } from './destructive.js';
import type { ConcurrencyConfig, Limit } from './options.js';
import { KeyArgs, LimitOptions } from './options.js';
import { PatternSet, PatternTable } from './pattern.js';

/** What guards one tool. `undefined` fields are guards it does not get. */
export interface ToolGuard {
  readonly limit: Limit | undefined;
  /** The argument fields of its lock key, when the tool is destructive. */
  readonly keyArgs: readonly string[] | undefined;
}

const PolicySchema = z.object({
  concurrency: LimitOptions.optional(),
  destructive: z.boolean().optional(),
  mutex: z.object({ keyArgs: KeyArgs.optional() }).strict().optional(),
});

function readPolicy(tool: SluiceTool, plugin: string): z.output<typeof PolicySchema> {
  const parsed = PolicySchema.safeParse(tool.policy);
  if (parsed.success) return parsed.data;
  const detail = parsed.error.issues.map((issue) => `policy.${issue.path.join('.')}: ${issue.message}`).join('; ');
  throw new SluiceError(
    ConcurrencyErrorCode.INVALID_POLICY,
    `Tool "${tool.name}" has invalid settings for plugin "${plugin}": ${detail}`,
    {
      plugin,
      hook: 'execute',
    },
  );
}

/**
 * Decides, once per tool at registration, which guards it gets. A local
 * tool's own policy comes first, then the options by exact name, then by
 * pattern (first listed wins), then the option's `default`.
 */
export class GuardSettings {
  private readonly limits: PatternTable<Limit>;
  private readonly keyArgs: PatternTable<readonly string[]>;
  private readonly rules: DestructiveRules | undefined;

  constructor(
    private readonly config: ConcurrencyConfig,
    private readonly plugin: string,
  ) {
    this.limits = new PatternTable(Object.entries(config.tools));
    const mutex = config.mutex;
    this.keyArgs = new PatternTable(
      mutex === false ? [] : Object.entries(mutex.tools).map(([k, v]) => [k, v.keyArgs] as const),
    );
    this.rules =
      mutex === false
        ? undefined
        : { destructive: new PatternSet(mutex.destructive), exempt: new PatternSet(mutex.exempt) };
  }

  resolve(tool: SluiceTool): ToolGuard | undefined {
    const policy = readPolicy(tool, this.plugin);
    const limit = policy.concurrency ?? this.limits.lookup(tool.name) ?? this.config.default;
    const keyArgs = this.mutexKeyArgs(tool, policy.mutex?.keyArgs);
    if (limit === undefined && keyArgs === undefined) return undefined;
    return { limit, keyArgs };
  }

  private mutexKeyArgs(tool: SluiceTool, own: readonly string[] | undefined): readonly string[] | undefined {
    const mutex = this.config.mutex;
    if (mutex === false || this.rules === undefined || !isDestructive(tool, this.rules)) return undefined;
    return own ?? this.keyArgs.lookup(tool.name) ?? mutex.keyArgs;
  }
}
