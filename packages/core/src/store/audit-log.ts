import { z } from 'zod/v4';
import type { Clock } from '../clock.js';
import { CoreErrorCode, SluiceError, messageOf } from '../errors.js';
import type { Logger } from '../logger.js';
import { parseOptions } from '../plugin.js';
import { AuditChainCheck, auditHash } from './audit-chain.js';
import type { AuditFields, AuditVerification } from './audit-chain.js';
import { AUDIT_GENESIS } from './memory-audit.js';
import type { AuditPage, AuditRecords, StoredAuditEntry } from './types.js';

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
} as const);
export type AuditKind = (typeof AuditKind)[keyof typeof AuditKind];

/** Characters kept of each field; longer text is cut (an upstream or a caller may send anything). */
export const MAX_AUDIT_FIELD_CHARS = 1024;

const Field = z
  .string()
  .transform((text) =>
    text.length > MAX_AUDIT_FIELD_CHARS ? `${text.slice(0, MAX_AUDIT_FIELD_CHARS - 1)}\u2026` : text,
  );

/** What a plugin appends: the kind and what it knows of who, what and why. Every field but `kind` is optional. */
export const AuditEventSchema = z
  .object({
    kind: z.enum(Object.values(AuditKind) as [AuditKind, ...AuditKind[]]),
    /** The tool, as the ledger or the call names it. */
    tool: Field.optional(),
    /** The upstream's configured name (absent for a local tool). */
    server: Field.optional(),
    /** Who made the call (`ctx.auth.subject`). */
    caller: Field.optional(),
    /** Who decided: an operator's name, `client` for the calling client's person, `sluice` for a policy. */
    by: Field.optional(),
    /**
     * How: an answer's channel (`elicitation`, `input-required`, `console`, `api`, `cli`, `webhook`), a ledger
     * decision's (`console`, `admin-api`, `code`, `ledger`), or who was to answer a question (`client`, `operator`).
     */
    channel: Field.optional(),
    /** The outcome: `approved`, `declined`, `cancelled`, `timeout`, `invalid`, `unsupported`, ... */
    decision: Field.optional(),
    /** Why, in words: a person's reason, a refusal's detail, the risk level. */
    reason: Field.optional(),
    /** Ties the entries of one question together (asked, then answered or lapsed). */
    approval: Field.optional(),
  })
  .strict();
export type AuditEvent = z.input<typeof AuditEventSchema>;

/** An entry as exported: the event's fields, its number, time (ms since the epoch), previous hash and own hash. */
export type AuditEntry = z.output<typeof AuditEventSchema> & {
  readonly seq: number;
  readonly at: number;
  readonly prev: string;
  readonly hash: string;
};

export const AuditOptions = z
  .object({
    /** Entries kept; the oldest go first (the anchor records where the kept chain starts). */
    maxEntries: z
      .number()
      .int()
      .min(1)
      .max(10_000_000)
      .default(100_000)
      .describe('Audit entries kept; the oldest go first, and verification still passes (the anchor moves with them).'),
  })
  .strict();
export type AuditOptions = z.input<typeof AuditOptions>;

/** Entries read per page by `verify` and at most by `read`. */
export const MAX_AUDIT_PAGE = 10_000;
/** Times an append retries when another replica appended first. */
const APPEND_ATTEMPTS = 64;

/**
 * The audit log: an append-only, hash-chained record of decisions, in the
 * server's store (shared by every replica on Redis). Each entry carries the
 * hash of the one before (`prev`) and its own (`hash`), so a modified,
 * deleted or moved entry shows in `verify()`. Retention drops the oldest
 * entries past `maxEntries` and moves the chain's anchor with them, so a
 * trimmed start is told apart from a deleted entry.
 *
 * Resolve it as `services.audit` and call `append()`: it never rejects for
 * the store's sake (a failure is logged as `audit.append_failed` with the
 * event), only for a malformed event, a bug in the caller.
 */
export class AuditLog {
  private readonly maxEntries: number;
  private queue: Promise<unknown> = Promise.resolve();
  private warnedMissing = false;

  constructor(
    private readonly records: AuditRecords | undefined,
    private readonly clock: Pick<Clock, 'now'>,
    private readonly logger: Logger,
    options: AuditOptions = {},
  ) {
    this.maxEntries = parseOptions('audit', AuditOptions, options).maxEntries;
  }

  /** Whether the store keeps an audit chain. */
  get enabled(): boolean {
    return this.records !== undefined;
  }

  /**
   * Appends an event; resolves with the entry written, or undefined when the
   * store has none or failed (logged). Appends of one process keep their order.
   */
  append(event: AuditEvent): Promise<AuditEntry | undefined> {
    const parsed = AuditEventSchema.safeParse(event);
    if (!parsed.success)
      return Promise.reject(
        new SluiceError(CoreErrorCode.INVALID_OPTIONS, `Not an audit event: ${parsed.error.issues[0]?.message ?? ''}`, {
          plugin: 'audit',
        }),
      );
    const records = this.records;
    if (records === undefined) {
      this.missing();
      return Promise.resolve(undefined);
    }
    const run = this.queue.then(() => this.write(records, parsed.data));
    this.queue = run.catch(() => undefined);
    return run.catch((error: unknown) => {
      this.logger.error(
        { event: 'audit.append_failed', audit: parsed.data, err: messageOf(error) },
        'an audit entry could not be written',
      );
      return undefined;
    });
  }

  /** Up to `limit` entries numbered above `after`, as stored (JSON text), with the anchor and head. */
  read(after = 0, limit = 1000): Promise<AuditPage> {
    if (!Number.isSafeInteger(after) || after < 0) throw new RangeError('after must be a whole number >= 0');
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_AUDIT_PAGE)
      throw new RangeError(`limit must be a whole number from 1 to ${MAX_AUDIT_PAGE}`);
    return this.records === undefined ? Promise.resolve(EMPTY) : this.records.read(after, limit);
  }

  /** Checks the whole kept chain, a page at a time. */
  async verify(): Promise<AuditVerification> {
    const check = new AuditChainCheck();
    let after = 0;
    for (;;) {
      const page = await this.read(after, MAX_AUDIT_PAGE);
      check.page(page);
      const last = page.entries[page.entries.length - 1];
      if (page.entries.length < MAX_AUDIT_PAGE || last === undefined) return check.finish(page.head);
      after = last.seq;
    }
  }

  private async write(records: AuditRecords, event: z.output<typeof AuditEventSchema>): Promise<AuditEntry> {
    let head = await records.head();
    for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
      const fields: AuditFields = { ...definedOf(event), seq: head.seq + 1, at: this.clock.now(), prev: head.hash };
      const hash = auditHash(fields);
      const entry = { ...fields, hash } as AuditEntry;
      const stored: StoredAuditEntry & { hash: string } = { seq: entry.seq, text: JSON.stringify(entry), hash };
      const outcome = await records.append(stored, head, this.maxEntries);
      if (outcome.appended) return entry;
      head = outcome.head;
    }
    throw new Error(`other writers appended first ${APPEND_ATTEMPTS} times in a row`);
  }

  private missing(): void {
    if (this.warnedMissing) return;
    this.warnedMissing = true;
    this.logger.warn({ event: 'audit.unavailable' }, 'the store keeps no audit log: audit events are not recorded');
  }
}

const EMPTY: AuditPage = Object.freeze({
  anchor: { seq: 1, prev: AUDIT_GENESIS },
  head: { seq: 0, hash: AUDIT_GENESIS },
  entries: [],
});

function definedOf(event: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(event)) if (value !== undefined) out[key] = value;
  return out;
}
