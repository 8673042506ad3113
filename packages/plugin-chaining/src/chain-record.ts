/** How one chained call ended. */
export type StepOutcome =
  /** The tool ran and returned a result. */
  | 'ok'
  /** The tool ran and returned an `isError` result of its own. */
  | 'error'
  /** The call did not run: a chain check or another guard refused it (see `code`). */
  | 'refused';

/** One chained call, as `_meta["dev.sluice/chain"].steps` lists it. */
export interface ChainStep {
  readonly tool: string;
  readonly durationMs: number;
  readonly outcome: StepOutcome;
  /** For a refused step: the refusal's code. */
  readonly code?: string;
}

/** What the caller finds in `_meta["dev.sluice/chain"]`: one flat record per chain. */
export interface ChainRecord {
  /** The tool the caller called, which started the chain. */
  readonly origin: string;
  /** The chained calls, in order; the origin is not one of them. */
  readonly steps: readonly ChainStep[];
  /** When the chain was stopped: the code in `_meta["dev.sluice/error"]`. */
  readonly stoppedBy?: string;
}

function describeStep(step: ChainStep): string {
  const outcome = step.outcome === 'refused' ? `refused: ${step.code ?? 'unknown'}` : step.outcome;
  return `${step.tool} (${outcome})`;
}

/** `check_account_issue -> initiate_human_handoff (ok)`: the chain as a model reads it. */
export function describeChain(record: ChainRecord): string {
  return [record.origin, ...record.steps.map(describeStep)].join(' -> ');
}
