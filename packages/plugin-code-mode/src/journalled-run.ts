import { refusal, toolError } from '@sluice/core';
import type { CallContext, CallToolResult, CarriedRound, FeatureRequests } from '@sluice/core';
import { GET_PROMPT, READ_RESOURCE, featureCall } from './features.js';
import { CodeModeErrorCode } from './errors.js';
import type { Journal, JournalEntry, JournalRefusal, Journals, PendingCall } from './journal.js';
import { argumentsDigest, measure } from './journal.js';
import type { PauseRefusal } from './paused-shares.js';
import { replyOf, replyOfError } from './replies.js';
import type { CallReply, ScriptOutcome } from './sandbox.js';

/** A 2026-07-28 input-required answer, as a nested call returns it (typed as a tool result). */
interface InputRequiredAnswer {
  readonly resultType: 'input_required';
  readonly requestState?: unknown;
  readonly [key: string]: unknown;
}

function isInputRequired(value: unknown): value is InputRequiredAnswer {
  return (
    typeof value === 'object' && value !== null && (value as { resultType?: unknown }).resultType === 'input_required'
  );
}

/** What ends a script's run: its outcome for the audit log, and the answer when it is not the outcome's. */
export interface RunEnd {
  readonly outcome: ScriptOutcome;
  readonly result?: CallToolResult;
  /** The script paused, but its caller's share of paused scripts, or the server's, was full (`JOURNALS_FULL`). */
  readonly refused?: PauseRefusal;
}

/**
 * The calls of one run of a script, kept so that the script can pause and
 * resume. A call whose answer is input-required (a risk approval on
 * 2026-07-28, or an upstream asking its client) pauses the script: no later
 * call reaches the pipeline, the calls already running finish, and the
 * script is stopped; `end()` then keeps the journal (every completed call and
 * its reply) and answers `execute_code` with the call's question under a
 * sealed state. When the client retries with its answer, the script runs from
 * the start: the calls of the journal are answered from it, in the order the
 * script makes them (a call whose tool or arguments differ stops the script
 * with `JOURNAL_MISMATCH`), and only the paused call runs for real, shown its
 * own round's state and the client's answers. Every other call is shown an
 * empty round, so that the answers reach only the call they were for.
 */
export class JournalledRun {
  private readonly replayed: ReadonlyMap<number, JournalEntry>;
  private readonly completed: JournalEntry[] = [];
  private pause: { readonly call: PendingCall; readonly answer: InputRequiredAnswer } | undefined;
  private mismatch: string | undefined;
  private inflight = 0;
  private readonly stopper = new AbortController();

  constructor(
    private readonly journal: Journal | undefined,
    private readonly ctx: CallContext,
    /** The server's reads and gets, for a script's `resources.read()` and `prompts.get()`. */
    private readonly features?: FeatureRequests,
  ) {
    this.replayed = new Map((journal?.entries ?? []).map((entry) => [entry.id, entry]));
  }

  /** Aborts when the script must stop: it paused and its running calls finished, or it left its journal. */
  get stopped(): AbortSignal {
    return this.stopper.signal;
  }

  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, id: number): Promise<CallReply> {
    // Once paused, nothing more reaches the pipeline; the script never sees these calls answered.
    if (this.pause !== undefined || this.mismatch !== undefined) return held(signal);
    const digest = argumentsDigest(args);
    const entry = this.replayed.get(id);
    if (entry !== undefined) {
      if (entry.tool !== tool || entry.args !== digest) return this.diverged(id, tool, entry.tool);
      this.completed.push(entry);
      return entry.reply;
    }
    const pending = this.journal?.pending;
    let round: CarriedRound = {};
    if (pending !== undefined && pending.id === id) {
      if (pending.tool !== tool || pending.args !== digest) return this.diverged(id, tool, pending.tool);
      const answers = this.ctx.mcp?.mcpReq.inputResponses;
      round = {
        ...(pending.state === undefined ? {} : { requestState: pending.state }),
        ...(answers === undefined ? {} : { inputResponses: answers }),
      };
    }
    this.inflight++;
    let reply: CallReply;
    try {
      if (this.features !== undefined && (tool === READ_RESOURCE || tool === GET_PROMPT)) {
        reply = await featureCall(this.features, tool, args, this.ctx, signal);
        return this.completedWith(id, tool, digest, reply);
      }
      const result: unknown = await this.ctx.call(tool, args, { signal, round });
      if (isInputRequired(result)) {
        this.inflight--;
        this.pause ??= {
          call: {
            id,
            tool,
            args: digest,
            ...(typeof result.requestState === 'string' ? { state: result.requestState } : {}),
          },
          answer: result,
        };
        this.stopIfSettled();
        return await held(signal);
      }
      reply = replyOf(result as CallToolResult);
    } catch (error) {
      reply = replyOfError(error);
    }
    return this.completedWith(id, tool, digest, reply);
  }

  private completedWith(id: number, tool: string, digest: string, reply: CallReply): CallReply {
    this.inflight--;
    this.completed.push({ id, tool, args: digest, reply });
    this.stopIfSettled();
    return reply;
  }

  /**
   * How the run ends. A paused script's journal is kept and its question
   * answered (unless the caller cancelled meanwhile); a script that left its
   * journal fails with `JOURNAL_MISMATCH`; otherwise the script's own outcome.
   */
  async end(
    outcome: ScriptOutcome,
    keep: { source: string; caller: string; journals: Journals; maxBytes: number },
  ): Promise<RunEnd> {
    const base = { logs: outcome.logs, cpuMs: outcome.cpuMs };
    if (this.mismatch !== undefined) {
      const failed = { ok: false as const, code: CodeModeErrorCode.JOURNAL_MISMATCH, message: this.mismatch, ...base };
      return { outcome: failed };
    }
    if (this.pause === undefined || this.ctx.signal.aborted) return { outcome };
    const journal: Journal = {
      v: 1,
      source: keep.source,
      caller: keep.caller,
      entries: [...this.completed].sort((a, b) => a.id - b.id),
      pending: this.pause.call,
    };
    const measured = measure(journal);
    const { bytes } = measured;
    if (bytes > keep.maxBytes) {
      const message = `The script paused at a call that needs an answer from the client, but the results of the ${journal.entries.length} calls it made before are ${bytes} bytes, more than a paused script may keep (${keep.maxBytes}).`;
      const failed = { ok: false as const, code: CodeModeErrorCode.JOURNAL_TOO_LARGE, message, ...base };
      return { outcome: failed };
    }
    const kept = await keep.journals.keep(journal, measured);
    if ('refused' in kept) {
      const message = `The script paused at call ${journal.pending.id} (${journal.pending.tool}), which needs an answer from the client, but ${fullShare(kept.refused)}; the calls it made before ran, and are not kept.`;
      const failed = { ok: false as const, code: CodeModeErrorCode.JOURNALS_FULL, message, ...base };
      return { outcome: failed, refused: kept.refused, result: journalsFull(kept.refused, message, outcome.logs) };
    }
    const requestState = kept.state;
    const paused = {
      ok: false as const,
      code: CodeModeErrorCode.SCRIPT_PAUSED,
      message: `paused at call ${journal.pending.id} (${journal.pending.tool})`,
      ...base,
    };
    return { outcome: paused, result: { ...this.pause.answer, requestState } as unknown as CallToolResult };
  }

  private diverged(id: number, tool: string, recorded: string): Promise<CallReply> {
    this.mismatch =
      tool === recorded
        ? `The resumed script called ${tool} (call ${id}) with other arguments than before it paused; its journal does not apply.`
        : `The resumed script made call ${id} to ${tool} where, before it paused, it called ${recorded}; its journal does not apply.`;
    this.stopper.abort();
    return Promise.resolve({ ok: false, code: CodeModeErrorCode.JOURNAL_MISMATCH, message: this.mismatch });
  }

  private stopIfSettled(): void {
    if (this.pause !== undefined && this.inflight === 0) this.stopper.abort();
  }
}

/** A reply the script never sees: it comes when the script has ended. */
function held(signal: AbortSignal): Promise<CallReply> {
  const reply: CallReply = { ok: false, code: CodeModeErrorCode.SCRIPT_PAUSED, message: 'The script paused.' };
  if (signal.aborted) return Promise.resolve(reply);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(reply), { once: true }));
}

const REFUSALS: Readonly<Record<JournalRefusal, { code: CodeModeErrorCode; message: string }>> = {
  altered: {
    code: CodeModeErrorCode.JOURNAL_INVALID,
    message: "The paused script's state or journal was altered, or is not this server's.",
  },
  'other-caller': {
    code: CodeModeErrorCode.JOURNAL_INVALID,
    message: 'The paused script belongs to another caller.',
  },
  'other-source': {
    code: CodeModeErrorCode.JOURNAL_INVALID,
    message: "The script's source differs from the one that paused: a journal replays only the same script.",
  },
  expired: {
    code: CodeModeErrorCode.JOURNAL_EXPIRED,
    message: "The paused script's journal lapsed before the script resumed.",
  },
  used: {
    code: CodeModeErrorCode.JOURNAL_USED,
    message: 'The paused script was already resumed once (or its journal lapsed).',
  },
};

/** Which share a journal did not fit in, as the refusal says it. */
function fullShare(why: PauseRefusal): string {
  if (why.share === 'caller') {
    return why.limit === 'scripts'
      ? `you already hold ${why.held} paused scripts, as many as one caller may (${why.max})`
      : `your paused scripts' journals hold ${why.held} bytes, and this one's ${why.bytes} more would pass what one caller may keep (${why.max})`;
  }
  // Nothing of what the other callers hold: only that the server's bound is reached.
  return why.limit === 'scripts'
    ? `this server keeps as many paused scripts as it may (${why.max})`
    : `this script's journal would pass the bytes of paused scripts this server keeps (${why.max})`;
}

/** The answer when a script could not pause: its caller's share of paused scripts, or the server's, is full. */
function journalsFull(why: PauseRefusal, message: string, logs: readonly string[]): CallToolResult {
  return refusal({
    code: CodeModeErrorCode.JOURNALS_FULL,
    message,
    suggestion:
      why.share === 'caller'
        ? 'Answer your paused scripts (retry each with its state) or let them lapse, then run this script again: its calls are made afresh.'
        : 'Run this script again later: its calls are made afresh.',
    ...(why.retryAfterMs === undefined ? {} : { retryAfterMs: why.retryAfterMs }),
    details: {
      share: why.share,
      limit: why.limit,
      max: why.max,
      ...(logs.length > 0 ? { logs } : {}),
    },
  });
}

/** The answer to a retry whose paused script cannot resume: nothing ran. */
export function journalRefused(why: JournalRefusal): CallToolResult {
  const { code, message } = REFUSALS[why];
  return toolError({
    code,
    message: `${message} Nothing of the script ran.`,
    suggestion: 'Run the script again without the state: its calls are then made afresh.',
  });
}
