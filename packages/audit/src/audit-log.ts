import { z } from 'zod/v4';
import {
  AUDIT_GENESIS,
  AuditKind,
  CoreErrorCode,
  MemoryStore,
  SluiceError,
  callerKeyOf,
  messageOf,
  parseOptions,
} from '@sluice/core';
import { systemClock } from '@sluice/core/internal';
import type {
  Audit,
  AuditEntry,
  AuditEvent,
  AuditFrom,
  AuditPage,
  AuditRecords,
  Logger,
  Store,
  StoredAuditEntry,
} from '@sluice/core';
import { AuditChainCheck, auditHash } from './audit-chain.js';
import type { AuditFields, AuditVerification } from './audit-chain.js';
import { ANONYMOUS_CALLER, ShareBudget } from './share-budget.js';
import type { BudgetClock, ShareKind, Suppressed } from './share-budget.js';

/** Characters kept of each field; longer text is cut (an upstream or a caller may send anything). */
export const MAX_AUDIT_FIELD_CHARS = 1024;

const Field = z
  .string()
  .transform((text) =>
    text.length > MAX_AUDIT_FIELD_CHARS ? `${text.slice(0, MAX_AUDIT_FIELD_CHARS - 1)}\u2026` : text,
  );

/** `AuditEvent` of `@sluice/core` checked: `kind` one of `AuditKind`, every other field a string, cut to 1 024 characters. */
export const AuditEventSchema = z
  .object({
    kind: z.enum(Object.values(AuditKind) as [AuditKind, ...AuditKind[]]),
    tool: Field.optional(),
    server: Field.optional(),
    caller: Field.optional(),
    by: Field.optional(),
    channel: Field.optional(),
    decision: Field.optional(),
    reason: Field.optional(),
    approval: Field.optional(),
  })
  .strict() satisfies z.ZodType<unknown, AuditEvent>;

/** A share's bounds: `maxEntries` (described for whom) per `windowMs`. */
function shareOptions(maxEntries: string, window: string) {
  return z
    .object({
      maxEntries: z.number().int().min(1).max(1_000_000).default(60).describe(maxEntries),
      windowMs: z.number().int().min(1_000).max(86_400_000).default(60_000).describe(window),
    })
    .strict()
    .prefault({});
}

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
    perCaller: shareOptions(
      'Entries one caller (its verified identity; every unauthenticated caller is one) may append per window; the rest are left out, and one audit.suppressed entry says how many.',
      'The window of perCaller.maxEntries, in ms.',
    ).describe(
      "Each caller's share of the log, counted over every replica sharing the store, so that one caller cannot push the others' entries out.",
    ),
    perUpstream: shareOptions(
      'Entries one upstream may cause per window (ledger.held: it redefined an approved tool); the rest are left out, and one audit.suppressed entry naming the upstream says how many.',
      'The window of perUpstream.maxEntries, in ms.',
    ).describe(
      "Each upstream's share of the log, counted over every replica sharing the store, so that an upstream redefining its tools on a timer cannot push the callers' or other upstreams' entries out.",
    ),
  })
  .strict();
export type AuditOptions = z.input<typeof AuditOptions>;

/** Entries read per page by `verify` and at most by `read`. */
export const MAX_AUDIT_PAGE = 10_000;
/** Times an append retries when another replica appended first. */
const APPEND_ATTEMPTS = 64;
/**
 * Kinds an upstream causes, appended without a call: they count against the
 * upstream they name (`server`). An operator's decisions are never counted.
 */
const UPSTREAM_KINDS: ReadonlySet<string> = new Set([AuditKind.LEDGER_HELD]);

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
export class AuditLog implements Audit {
  private readonly maxEntries: number;
  private readonly shares: Readonly<Record<ShareKind, ShareBudget>>;
  private queue: Promise<unknown> = Promise.resolve();
  private warnedMissing = false;

  /**
   * `counts`: where each caller's and upstream's budget is counted, the
   * server's store (so every replica sharing it counts together); without
   * it, this process counts alone.
   */
  constructor(
    private readonly records: AuditRecords | undefined,
    private readonly clock: BudgetClock,
    private readonly logger: Logger,
    options: AuditOptions = {},
    counts?: Pick<Store, 'increment' | 'get'>,
  ) {
    const parsed = parseOptions('audit', AuditOptions, options);
    this.maxEntries = parsed.maxEntries;
    const own = counts ?? new MemoryStore({ ...systemClock, now: () => clock.now() });
    const share = (kind: ShareKind, limits: z.output<typeof AuditOptions>['perCaller']) =>
      new ShareBudget(kind, own, clock, limits, (suppressed) => this.summarize(kind, suppressed));
    this.shares = { caller: share('caller', parsed.perCaller), upstream: share('upstream', parsed.perUpstream) };
  }

  /** Whether the store keeps an audit chain. */
  get enabled(): boolean {
    return this.records !== undefined;
  }

  /**
   * Appends an event; resolves with the entry written, or undefined when the
   * store has none or failed (logged), or the entry is past its share: its
   * caller's (`from`: the call it is about), or, without `from`, the
   * upstream's that caused it (`ledger.held`, by its `server`). Other entries
   * are not counted. Appends of one process keep their order.
   */
  append(event: AuditEvent, from?: AuditFrom): Promise<AuditEntry | undefined> {
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
    const share = shareOf(parsed.data, from);
    const run = this.queue.then(async () =>
      share === undefined || (await this.admitted(share)) ? await this.write(records, parsed.data) : undefined,
    );
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

  /** Whether the share has room; a store that cannot count does not cost the entry. */
  private async admitted({ kind, key }: Share): Promise<boolean> {
    try {
      return await this.shares[kind].admit(key);
    } catch (error) {
      this.logger.warn(
        { event: 'audit.budget_failed', share: kind, err: messageOf(error) },
        `a ${kind}'s audit budget was not counted`,
      );
      return true;
    }
  }

  /** The one entry of a window that says how many of a share's entries were left out. */
  private summarize(kind: ShareKind, { share, count, since }: Suppressed): Promise<AuditEntry | undefined> {
    const { maxEntries, windowMs } = this.shares[kind].limits;
    const window = windowMs === 60_000 ? 'minute' : `${windowMs / 1_000} s`;
    const rate = windowMs === 60_000 ? 'a minute' : `per ${window}`;
    return this.append({
      kind: AuditKind.AUDIT_SUPPRESSED,
      ...(kind === 'caller' ? { caller: share } : { server: share }),
      by: 'sluice',
      decision: 'suppressed',
      reason: `${count} more entries from ${kind} ${share} suppressed in the ${window} from ${new Date(since).toISOString()} (at most ${maxEntries} ${rate})`,
    });
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

/** A share and its key: a caller's (`callerKeyOf`) or an upstream's (its configured name). */
interface Share {
  readonly kind: ShareKind;
  readonly key: string;
}

/** Whose share an entry counts against, if anyone's. */
function shareOf(event: z.output<typeof AuditEventSchema>, from: AuditFrom | undefined): Share | undefined {
  if (from !== undefined) return { kind: 'caller', key: callerKeyOf(from.authInfo) ?? ANONYMOUS_CALLER };
  if (UPSTREAM_KINDS.has(event.kind) && event.server !== undefined) return { kind: 'upstream', key: event.server };
  return undefined;
}

function definedOf(event: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(event)) if (value !== undefined) out[key] = value;
  return out;
}
