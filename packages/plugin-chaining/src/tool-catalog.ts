import { compileSchema, messageOf } from '@sluice/core';
import type { CompiledSchema, Logger, SluiceTool, ToolCatalog, ValidationResult } from '@sluice/core';
import type { ChainRules } from './chain-rules.js';
import type { ChainTarget } from './vet-next.js';

interface Entry {
  readonly tool: SluiceTool;
  readonly follows: boolean;
  readonly target: ChainTarget;
}

/**
 * The tools this server exposes, as the chain checks need them. Kept in step
 * with the core's catalog, which reports each change once the core has
 * settled it (final names, name collisions resolved, removals).
 *
 * An imported tool's directive names a tool as its upstream knows it; it is
 * resolved among that upstream's tools only, since an upstream can vouch
 * only for the tools it lists itself (and cannot steer chains into local tools).
 */
export class ChainCatalog {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly tools: ToolCatalog,
    private readonly rules: ChainRules,
    private readonly logger: Logger,
  ) {
    tools.subscribe((change) => {
      for (const tool of change.removed) if (this.entries.get(tool.name)?.tool === tool) this.entries.delete(tool.name);
      for (const tool of change.added) this.add(tool);
    });
  }

  private add(tool: SluiceTool): void {
    const policy = tool.policy.chaining;
    const allowed = this.rules.targetable(tool, policy);
    this.entries.set(tool.name, {
      tool,
      follows: this.rules.follows(tool, policy),
      target: this.targetOf(tool, allowed),
    });
  }

  /** Whether the directive in this tool's result is followed. */
  follows(tool: SluiceTool): boolean {
    const entry = this.entries.get(tool.name);
    return entry !== undefined && entry.tool === tool ? entry.follows : this.rules.follows(tool, tool.policy.chaining);
  }

  continues(name: string): boolean {
    return this.entries.get(name)?.follows ?? false;
  }

  /** The tool that a directive in the result of `from` names. */
  target(name: string, from: string): ChainTarget | undefined {
    const source = this.entries.get(from)?.tool.source;
    if (source?.kind !== 'upstream') return this.entries.get(name)?.target;
    const exposed = this.tools.byOrigin(source.upstream, name);
    return exposed === undefined ? undefined : this.entries.get(exposed.name)?.target;
  }
  private targetOf(tool: SluiceTool, allowed: boolean): ChainTarget {
    // The core checks a local tool's arguments against its own schema before any guard runs.
    if (tool.source.kind === 'local') return { name: tool.name, allowed };
    let schema: CompiledSchema | null | undefined;
    return {
      name: tool.name,
      allowed,
      validate: (args): ValidationResult | Promise<ValidationResult> => {
        schema ??= this.compile(tool);
        return schema === null ? { ok: true, value: args } : schema.validate(args);
      },
    };
  }

  // Compiled on first use: most tools are never the target of a chain.
  private compile(tool: SluiceTool): CompiledSchema | null {
    try {
      return compileSchema(tool.definition.inputSchema, 'input', tool.name);
    } catch (error) {
      this.logger.warn(
        { event: 'chain.schema_unusable', tool: tool.name, err: messageOf(error) },
        'the input schema of a chain target does not compile; its server will check the arguments',
      );
      return null;
    }
  }
}
