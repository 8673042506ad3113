import type { ChainRuleConfig } from './options.js';
import type { ChainingPolicy } from './tool-policy.js';
import { selectTools } from '@sluice/core';
import type { ToolMatcher } from '@sluice/core';

/** The `tools` and `targets` rules, compiled once; a tool's own policy wins over the patterns. */
export class ChainRules {
  private readonly followed: ToolMatcher;
  private readonly targeted: ToolMatcher;

  constructor(config: ChainRuleConfig) {
    this.followed = selectTools(config.tools);
    this.targeted = selectTools(config.targets);
  }

  follows(name: string, policy?: ChainingPolicy): boolean {
    return policy?.follow ?? this.followed(name);
  }

  targetable(name: string, policy?: ChainingPolicy): boolean {
    return policy?.target ?? this.targeted(name);
  }
}
