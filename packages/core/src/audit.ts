import { capability } from './capability.js';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import type { AuthInfo } from './protocol.js';
import type { AuditRecords, Store } from './store/types.js';

/** What the audit log records: the decisions people and policies make about calls and tools. */
export const AuditKind = Object.freeze({
  /** A person was asked to approve a call. */
  APPROVAL_ASKED: 'approval.asked',
  /** A person answered (approved, declined or cancelled): `by`, `channel`, `decision`, `reason`. */
  APPROVAL_ANSWERED: 'approval.answered',
  /** Nobody answered in time. */
  APPROVAL_LAPSED: 'approval.lapsed',
  /** The approval was refused without a person's answer: a tampered or replayed state, a client that cannot ask. */
  APPROVAL_REFUSED: 'approval.refused',
  /** An operator approved a tool's current definition in the ledger. */
  LEDGER_APPROVED: 'ledger.approved',
  /** An operator revoked a tool in the ledger. */
  LEDGER_REVOKED: 'ledger.revoked',
  /** The ledger held a tool whose definition changed since it was approved. */
  LEDGER_HELD: 'ledger.held',
  /**
   * A caller's entries past its budget (`audit.perCaller`) were left out, with `caller` (its key), or an
   * upstream's holds past its budget (`audit.perUpstream`), with `server` (the upstream); in `reason` how many,
   * in which window. Written once per caller or upstream and window, after the window ends.
   */
  AUDIT_SUPPRESSED: 'audit.suppressed',
} as const);
export type AuditKind = (typeof AuditKind)[keyof typeof AuditKind];

/** What a plugin appends: the kind and what it knows of who, what and why. Every field but `kind` is optional. */
export interface AuditEvent {
  readonly kind: AuditKind;
  /** The tool, as the ledger or the call names it. */
  readonly tool?: string | undefined;
  /** The upstream's configured name (absent for a local tool). */
  readonly server?: string | undefined;
  /** Who made the call (`ctx.auth.subject`). */
  readonly caller?: string | undefined;
  /** Who decided: an operator's name, `client` for the calling client's person, `sluice` for a policy. */
  readonly by?: string | undefined;
  /**
   * How: an answer's channel (`elicitation`, `input-required`, `console`, `api`, `cli`, `webhook`), a ledger
   * decision's (`console`, `admin-api`, `code`, `ledger`), or who was to answer a question (`client`, `operator`).
   */
  readonly channel?: string | undefined;
  /** The outcome: `approved`, `declined`, `cancelled`, `timeout`, `invalid`, `unsupported`, ... */
  readonly decision?: string | undefined;
  /** Why, in words: a person's reason, a refusal's detail, the risk level. */
  readonly reason?: string | undefined;
  /** Ties the entries of one question together (asked, then answered or lapsed). */
  readonly approval?: string | undefined;
}

/** An entry as written: the event's fields, its number, time (ms since the epoch), previous hash and own hash. */
export type AuditEntry = AuditEvent & {
  readonly seq: number;
  readonly at: number;
  readonly prev: string;
  readonly hash: string;
};

/**
 * The call an entry is about. Its caller (`callerKeyOf(authInfo)`, or
 * `anonymous` without one) has a budget of entries per window
 * (`audit.perCaller`), so that one caller cannot push every other caller's
 * entries out of the log.
 */
export interface AuditFrom {
  /** The call's `ctx.authInfo`. */
  readonly authInfo: AuthInfo | undefined;
}

/**
 * `services.audit`: where plugins append decisions. The hash-chained log
 * behind it is `@sluice/audit` (which adds `read()` and `verify()` here);
 * without that import an append resolves undefined and records nothing (said
 * once in the log).
 */
export interface Audit {
  /** Whether appends are recorded. */
  readonly enabled: boolean;
  /**
   * Resolves with the entry written, or undefined when nothing was recorded
   * (no log, or past the caller's budget); never rejects for the store's sake.
   * `from`: the call the entry is about, whose caller's budget it counts
   * against; without it (an operator's decision, the ledger's) it is not counted.
   */
  append(event: AuditEvent, from?: AuditFrom): Promise<AuditEntry | undefined>;
}

/** `createServer({ audit })`: the audit log's retention and each caller's share of it, checked by `@sluice/audit`. */
export interface AuditOptions {
  /** Entries kept (default 100 000); the oldest go first. */
  maxEntries?: number;
  /** One caller's budget: at most `maxEntries` (default 60) per `windowMs` (default 60 000). */
  perCaller?: { maxEntries?: number; windowMs?: number };
}

/**
 * How a server's `services.audit` is made: given by `@sluice/audit` when it
 * is imported. `store`: the server's, where the callers' budgets are counted
 * (over every replica, on a shared store).
 */
export interface Auditing {
  create(
    records: AuditRecords | undefined,
    clock: Clock,
    logger: Logger,
    options: AuditOptions | undefined,
    store: Store,
  ): Audit;
}

const auditing = capability<Auditing>('services.audit', '@sluice/audit');
/** Called by `@sluice/audit` as it loads. */
export const provideAuditing = auditing.provide;

/**
 * A server's audit: made now when `@sluice/audit` is loaded (so bad options
 * throw at construction), else on first use, by then or not at all imported.
 * Options given without the package throw `INVALID_STATE`, naming it.
 */
export function serverAudit(
  store: Store,
  clock: Clock,
  logger: Logger,
  options: AuditOptions | undefined,
): () => Audit {
  // Options ask for the log: without its package that is a mistake to say now, not a log that silently records nothing.
  if (options !== undefined) auditing.get();
  const make = (): Audit =>
    auditing.provided()?.create(store.audit, clock, logger, options, store) ?? unrecorded(logger);
  let audit = auditing.provided() === undefined ? undefined : make();
  return () => (audit ??= make());
}

/**
 * The audit of a program without `@sluice/audit`. Typed as `Audit` although it
 * has no `read()` or `verify()`: those members exist in a program's types only
 * where it imports the package, and that import provides the log before any
 * server is made, so this object is never made there.
 */
function unrecorded(logger: Logger): Audit {
  let warned = false;
  const audit: Pick<Audit, 'enabled' | 'append'> = {
    enabled: false,
    append() {
      if (!warned)
        logger.warn(
          { event: 'audit.unavailable' },
          "audit events are not recorded: the audit log is @sluice/audit (import '@sluice/audit' once in the program)",
        );
      warned = true;
      return Promise.resolve(undefined);
    },
  };
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed where @sluice/audit augments Audit
  return audit as Audit;
}
