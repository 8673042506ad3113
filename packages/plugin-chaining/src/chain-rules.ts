import type { ChainRuleConfig } from './options.js';
import type { ChainingPolicy } from './tool-policy.js';
import { selectTools } from '@sluice/core';
import type { ToolMatcher, ToolSubject } from '@sluice/core';

/** The `tools` and `targets` rules, compiled once; a tool's own policy wins over the patterns. */
export class ChainRules {
  private readonly followed: ToolMatcher;
  private readonly targeted: ToolMatcher;

  constructor(config: ChainRuleConfig) {
    this.followed = selectTools(config.tools);
    this.targeted = selectTools(config.targets);
  }

  /** A tool known only by name (on the client side) is never selected by an `upstream/` selector. */
  follows(tool: string | ToolSubject, policy?: ChainingPolicy): boolean {
    return policy?.follow ?? this.followed(tool);
  }

  targetable(tool: string | ToolSubject, policy?: ChainingPolicy): boolean {
    return policy?.target ?? this.targeted(tool);
  }
}
