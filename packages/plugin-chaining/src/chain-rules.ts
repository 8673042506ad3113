import type { ChainRuleConfig } from './options.js';
import type { ChainingPolicy } from './tool-policy.js';
import type { ToolMatcher } from './tool-patterns.js';
import { toolMatcher } from './tool-patterns.js';

/** The `tools` and `targets` rules, compiled once; a tool's own policy wins over the patterns. */
export class ChainRules {
  private readonly followed: ToolMatcher;
  private readonly targeted: ToolMatcher;

  constructor(config: ChainRuleConfig) {
    this.followed = toolMatcher(config.tools);
    this.targeted = toolMatcher(config.targets);
  }

  follows(name: string, policy?: ChainingPolicy): boolean {
    return policy?.follow ?? this.followed(name);
  }

  targetable(name: string, policy?: ChainingPolicy): boolean {
    return policy?.target ?? this.targeted(name);
  }
}
