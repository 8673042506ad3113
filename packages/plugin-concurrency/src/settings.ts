import { z } from 'zod/v4';
import { SluiceError, ToolSettings, formatIssues, selectTools } from '@sluice/core';
import type { SluiceTool } from '@sluice/core';
import type { DestructiveRules } from './destructive.js';
import { ConcurrencyErrorCode } from './errors.js';
import { isDestructive } from './destructive.js';
import type { ConcurrencyConfig, Limit } from './options.js';
import { KeyArgs, LimitOptions } from './options.js';

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
  const detail = formatIssues(parsed.error, { prefix: ['policy'] });
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
 * Decides, once per tool at registration, which guards it gets, with core's
 * settings tables: a local tool's own policy comes first, then the options by
 * exact name, then by selector (first written wins), then the option's `default`.
 */
export class GuardSettings {
  private readonly limits: ToolSettings<Limit>;
  private readonly keyArgs: ToolSettings<readonly string[]>;
  private readonly rules: DestructiveRules | undefined;

  constructor(
    private readonly config: ConcurrencyConfig,
    private readonly plugin: string,
  ) {
    this.limits = new ToolSettings(config.tools);
    const mutex = config.mutex;
    this.keyArgs = new ToolSettings(
      mutex === false ? [] : Object.entries(mutex.tools).map(([k, v]) => [k, v.keyArgs] as const),
    );
    this.rules =
      mutex === false
        ? undefined
        : {
            destructive: selectTools(mutex.destructive),
            exempt: selectTools(mutex.exempt),
            annotations: mutex.annotations,
          };
  }

  resolve(tool: SluiceTool): ToolGuard | undefined {
    const policy = readPolicy(tool, this.plugin);
    const limit = this.limits.resolve(tool, policy.concurrency, this.config.default);
    const keyArgs = this.mutexKeyArgs(tool, policy.mutex?.keyArgs);
    if (limit === undefined && keyArgs === undefined) return undefined;
    return { limit, keyArgs };
  }

  private mutexKeyArgs(tool: SluiceTool, own: readonly string[] | undefined): readonly string[] | undefined {
    const mutex = this.config.mutex;
    if (mutex === false || this.rules === undefined || !isDestructive(tool, this.rules)) return undefined;
    return this.keyArgs.resolve(tool, own, mutex.keyArgs);
  }
}
