import { createHash } from 'node:crypto';
import { SluiceError } from '@sluice/core';
import { z } from 'zod';
import { canonicalJson } from './canonical.js';
import type { ToolShape } from '../definition.js';
import { RiskErrorCode } from '../errors.js';
import type { LedgerStore } from './store.js';

/** How a definition compares with the approved fingerprint. */
export type LedgerStatus = 'NEW' | 'UNCHANGED' | 'MISMATCH';

/** Whether calls to the tool may run. */
export type Lifecycle = 'ACTIVE' | 'AWAITING_REREVIEW' | 'REVOKED';

/** An operator's decision on a tool, as the ledger records it. */
const DecisionSchema = z.object({
  action: z.enum(['approve', 'revoke']),
  /** Who decided: the verified caller's name, or what the operator's tool says. */
  by: z.string(),
  at: z.number(),
});

/** How many of a verdict's hits the ledger keeps, and how much of a surface or reason. */
export const MAX_VERDICT_HITS = 64;
const MAX_SURFACE_CHARS = 256;
const MAX_REASON_CHARS = 2_000;

/**
 * The scan's verdict on a definition, as the ledger records it beside the
 * fingerprint it was given for: what the scan found (pattern, severity,
 * where; not the excerpts, which events carry) and the outside judge's
 * answer, clean or poisoned. No `judge` when there is no judge or it gave no verdict.
 */
const VerdictSchema = z.object({
  fingerprint: z.string(),
  at: z.number(),
  hits: z
    .array(
      z.object({
        pattern: z.string(),
        severity: z.string(),
        surface: z.string().max(MAX_SURFACE_CHARS),
      }),
    )
    .max(MAX_VERDICT_HITS),
  judge: z
    .object({
      poisoned: z.boolean(),
      reason: z.string().max(MAX_REASON_CHARS),
      severity: z.string().optional(),
    })
    .optional(),
});

const EntrySchema = z.object({
  name: z.string(),
  approved: z.string(),
  seen: z.string(),
  body: z.string(),
  lifecycle: z.enum(['ACTIVE', 'AWAITING_REREVIEW', 'REVOKED']),
  present: z.boolean(),
  firstSeenAt: z.number(),
  changedAt: z.number().optional(),
  approvedAt: z.number().optional(),
  /** The definition approved (or first seen), as readable JSON; records written before it was kept lack it. */
  approvedDefinition: z.string().optional(),
  /** The definition seen last, as readable JSON. */
  definition: z.string().optional(),
  /** The latest decisions, oldest first, at most `MAX_DECISIONS`. */
  decisions: z.array(DecisionSchema).optional(),
  /** The scan's verdict on the definition last scanned; records written before verdicts were kept lack it. */
  verdict: VerdictSchema.optional(),
  /** When the upstream's list was first seen without the tool (epoch ms); absent while it is listed. */
  goneAt: z.number().optional(),
  /**
   * The fingerprints the tool was found redefined to since its last approval, latest last, at most
   * `MAX_HELD_KEPT`: a tool flipping between definitions is news once per definition.
   */
  held: z.array(z.string()).optional(),
});
const RecordSchema = z.object({ version: z.literal(1), tools: z.array(EntrySchema) });

/** What the ledger holds for one tool of one upstream. */
export type LedgerEntry = z.infer<typeof EntrySchema>;
/** An operator's approval or revocation, with who and when. */
export type LedgerDecision = z.infer<typeof DecisionSchema>;
/** The scan's and the judge's verdict on one definition, as the ledger keeps it. */
export type LedgerVerdict = z.infer<typeof VerdictSchema>;
/** What an import hands the ledger for one tool: the verdict without its time, which the ledger adds. */
export type VerdictInput = Omit<LedgerVerdict, 'at'>;

/** Decisions kept per tool; older ones are dropped. */
export const MAX_DECISIONS = 20;
/** Redefinitions remembered per tool since its last approval (`held`); older ones are news again. */
export const MAX_HELD_KEPT = 8;
/** Tools an upstream stopped listing that the ledger keeps per upstream, by default (`ledger.maxVanished`). */
export const DEFAULT_MAX_VANISHED = 256;

/** What the ledger keeps. */
export interface LedgerLimits {
  /**
   * Tools an upstream stopped listing kept per upstream: past it, those gone
   * longest are forgotten, the ones no operator decided on first.
   */
  readonly maxVanished: number;
}
/** Who decided, when it does not say: a call from code. */
export const UNNAMED_OPERATOR = 'operator';

export interface LedgerCheck {
  readonly status: LedgerStatus;
  readonly lifecycle: Lifecycle;
  /** The fingerprint of the definition just checked. */
  readonly hash: string;
  /** The fingerprint last approved (or first seen). */
  readonly approved: string;
  /** The fingerprint seen before this check, if any. */
  readonly previous?: string;
  /** The tool that vanished from the same upstream with an identical definition apart from its name. */
  readonly renamedFrom?: string;
  /**
   * A mismatch the ledger reported before: the tool went back to an earlier
   * definition since its last approval, or to one it was found redefined
   * to already. Not news: no hold is recorded, no mismatch logged.
   */
  readonly repeated?: true;
}

/** The outcome of checking an upstream's whole tool list. */
export interface LedgerBatch {
  /** Per tool name; a definition that cannot be fingerprinted maps to its error. */
  readonly results: ReadonlyMap<string, LedgerCheck | SluiceError>;
  readonly renames: ReadonlyArray<{ readonly from: string; readonly to: string }>;
  /** Tools that were in the previous list and are gone (not renamed). */
  readonly removed: readonly string[];
}

// `required` lists a set of property names: regenerating a schema with its fields in another order is no change.
const UNORDERED = { unordered: new Set(['required']) };

/** SHA-256 over the canonical JSON of everything of a definition that reaches a model. */
export function fingerprint(definition: ToolShape): string {
  return sha256(canonicalJson(fingerprinted(definition, true), UNORDERED));
}

/** A definition kept longer than this is cut (with a note), so that a hostile upstream cannot bloat the ledger. */
export const MAX_DEFINITION_CHARS = 64 * 1024;

/**
 * What the ledger keeps of a definition for an operator to compare: the
 * fingerprinted fields as indented JSON, keys sorted, cut at `MAX_DEFINITION_CHARS`.
 */
export function definitionText(definition: ToolShape): string {
  const text = JSON.stringify(JSON.parse(canonicalJson(fingerprinted(definition, true), UNORDERED)), null, 2);
  return text.length > MAX_DEFINITION_CHARS
    ? `${text.slice(0, MAX_DEFINITION_CHARS)}\n… (cut at ${MAX_DEFINITION_CHARS} characters)`
    : text;
}

/** The same without the name: equal for a tool and its rename. */
export function bodyFingerprint(definition: ToolShape): string {
  return sha256(canonicalJson(fingerprinted(definition, false), UNORDERED));
}

function fingerprinted(d: ToolShape, withName: boolean): Record<string, unknown> {
  return {
    ...(withName ? { name: d.name } : {}),
    title: d.title,
    description: d.description,
    inputSchema: d.inputSchema,
    outputSchema: d.outputSchema,
    annotations: d.annotations,
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const KEY_PREFIX = 'dev.sluice/risk/ledger/';

/**
 * How replicas that share the ledger's store take turns and hear of each
 * other's changes (see `LedgerSync`). Without it the ledger is one process's.
 */
export interface LedgerSharing {
  /** Held around each read-modify-write of one upstream's record; resolves to its release. */
  lock(serverId: string): Promise<() => void>;
  /** Called after a write, for other replicas to notice. */
  changed(serverId: string): Promise<void>;
}

/**
 * The fingerprint ledger: per upstream (by its configured name) and tool, the
 * approved fingerprint, the one last seen, and whether calls may run. A
 * definition that no longer matches its approval waits for re-review; a
 * revoked tool stays revoked until approved again. Operations on one
 * upstream are serialized; records are cached after the first read.
 */
export class FingerprintLedger {
  private readonly records = new Map<string, Map<string, LedgerEntry>>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: LedgerStore,
    private readonly now: () => number = Date.now,
    private readonly sharing?: LedgerSharing,
    private readonly limits: LedgerLimits = { maxVanished: DEFAULT_MAX_VANISHED },
  ) {}

  /** Checks one definition (and records it). No rename or removal tracking: use `checkAll` for a whole list. */
  check(serverId: string, definition: ToolShape): Promise<LedgerCheck> {
    return this.serialized(serverId, (tools) => {
      const hashes = {
        hash: fingerprint(definition),
        body: bodyFingerprint(definition),
        text: definitionText(definition),
      };
      const existing = tools.get(definition.name);
      return existing ? this.compare(existing, hashes) : this.create(tools, definition.name, hashes);
    });
  }

  /**
   * Checks an upstream's complete tool list: changes, new tools, renames and
   * removals. Of the tools it stopped listing, at most `maxVanished` are kept
   * (see `forgetGone`). The record is written only when something changed.
   */
  checkAll(serverId: string, definitions: readonly ToolShape[]): Promise<LedgerBatch> {
    let changed = false;
    return this.serialized(
      serverId,
      (tools) => {
        const results = new Map<string, LedgerCheck | SluiceError>();
        const fresh: Array<{ name: string } & Hashes> = [];
        for (const definition of definitions) {
          const hashes = tryFingerprints(definition);
          if (SluiceError.is(hashes)) results.set(definition.name, hashes);
          else {
            const existing = tools.get(definition.name);
            if (existing === undefined) fresh.push({ name: definition.name, ...hashes });
            else {
              changed ||= !isCurrent(existing, hashes);
              results.set(definition.name, this.compare(existing, hashes));
            }
          }
        }
        const listed = new Set(definitions.map((d) => d.name));
        const vanished = [...tools.values()].filter((e) => e.present && !listed.has(e.name));
        const renames: Array<{ from: string; to: string }> = [];
        for (const tool of fresh) {
          const from = vanished.find((e) => e.body === tool.body && !renames.some((r) => r.from === e.name));
          const check = this.create(tools, tool.name, tool, from);
          if (from) renames.push({ from: from.name, to: tool.name });
          results.set(tool.name, check);
        }
        const at = this.now();
        for (const entry of vanished) {
          entry.present = false;
          entry.goneAt = at;
        }
        changed ||= fresh.length > 0 || vanished.length > 0;
        forgetGone(tools, this.limits.maxVanished);
        return {
          results,
          renames,
          removed: vanished.filter((e) => !renames.some((r) => r.from === e.name)).map((e) => e.name),
        };
      },
      () => changed,
    );
  }

  /** Accepts the definition last seen: calls may run again. `by` names who decided, for the record. */
  approveRereview(serverId: string, toolName: string, by: string = UNNAMED_OPERATOR): Promise<LedgerEntry> {
    return this.serialized(serverId, (tools) => {
      const entry = known(tools, serverId, toolName);
      const at = this.now();
      entry.approved = entry.seen;
      if (entry.definition !== undefined) entry.approvedDefinition = entry.definition;
      entry.lifecycle = 'ACTIVE';
      entry.approvedAt = at;
      // Redefinitions seen before this approval are news again after it.
      delete entry.held;
      record(entry, { action: 'approve', by, at });
      return { ...entry };
    });
  }

  /** Stops calls to the tool until it is approved again, whatever its definition. */
  revoke(serverId: string, toolName: string, by: string = UNNAMED_OPERATOR): Promise<LedgerEntry> {
    return this.serialized(serverId, (tools) => {
      const entry = known(tools, serverId, toolName);
      const at = this.now();
      entry.lifecycle = 'REVOKED';
      entry.changedAt = at;
      record(entry, { action: 'revoke', by, at });
      return { ...entry };
    });
  }

  /**
   * Keeps the scan's verdict on each named tool's definition (bounded: at
   * most `MAX_VERDICT_HITS` hits, surfaces and the judge's reason cut). The
   * record is written only when a verdict differs from the one kept, so a
   * re-import of unchanged tools writes nothing. Tools the ledger does not
   * hold are skipped.
   */
  recordVerdicts(serverId: string, verdicts: ReadonlyArray<{ name: string; verdict: VerdictInput }>): Promise<boolean> {
    return this.serialized(
      serverId,
      (tools) => {
        let changed = false;
        const at = this.now();
        for (const { name, verdict } of verdicts) {
          const entry = tools.get(name);
          if (entry === undefined) continue;
          const bounded = boundVerdict(verdict);
          if (entry.verdict !== undefined && sameVerdict(entry.verdict, bounded)) continue;
          entry.verdict = { ...bounded, at };
          changed = true;
        }
        return changed;
      },
      (changed) => changed,
    );
  }

  /** The lifecycle in memory, without a read: undefined until the upstream was loaded. */
  lifecycle(serverId: string, toolName: string): Lifecycle | undefined {
    return this.records.get(serverId)?.get(toolName)?.lifecycle;
  }

  /** Every entry of one upstream (read again from the store when it is shared). */
  async entries(serverId: string): Promise<LedgerEntry[]> {
    return this.serialized(serverId, (tools) => [...tools.values()].map((e) => ({ ...e })), false);
  }

  private compare(entry: LedgerEntry, { hash, body, text }: Hashes): LedgerCheck {
    const previous = entry.seen;
    entry.seen = hash;
    entry.body = body;
    entry.definition = text;
    // A record from before definitions were kept: the approved one is known only while it is still the one seen.
    if (entry.approvedDefinition === undefined && hash === entry.approved) entry.approvedDefinition = text;
    entry.present = true;
    delete entry.goneAt;
    if (hash !== previous) entry.changedAt = this.now();
    const matches = hash === entry.approved;
    // Back to the approved definition: nothing is left to review. A revocation outlives any definition.
    if (entry.lifecycle !== 'REVOKED') entry.lifecycle = matches ? 'ACTIVE' : 'AWAITING_REREVIEW';
    const repeated = !matches && hash !== previous && remembered(entry, hash);
    return {
      status: matches ? 'UNCHANGED' : 'MISMATCH',
      lifecycle: entry.lifecycle,
      hash,
      approved: entry.approved,
      previous,
      ...(repeated ? { repeated } : {}),
    };
  }

  private create(
    tools: Map<string, LedgerEntry>,
    name: string,
    { hash, body, text }: Hashes,
    renamedFrom?: LedgerEntry,
  ): LedgerCheck {
    // A rename cannot launder a hold: the new name inherits it.
    const lifecycle = renamedFrom && renamedFrom.lifecycle !== 'ACTIVE' ? renamedFrom.lifecycle : 'ACTIVE';
    tools.set(name, {
      name,
      approved: hash,
      seen: hash,
      body,
      lifecycle,
      present: true,
      firstSeenAt: this.now(),
      approvedDefinition: text,
      definition: text,
    });
    return {
      status: 'NEW',
      lifecycle,
      hash,
      approved: hash,
      ...(renamedFrom ? { renamedFrom: renamedFrom.name } : {}),
    };
  }

  /** `save`: whether the work writes the record back; a function decides from the work's result. */
  private serialized<T>(
    serverId: string,
    work: (tools: Map<string, LedgerEntry>) => T | Promise<T>,
    save: boolean | ((result: T) => boolean) = true,
  ): Promise<T> {
    const previous = this.queues.get(serverId) ?? Promise.resolve();
    const run = previous.then(async () => {
      const release = save ? await this.sharing?.lock(serverId) : undefined;
      try {
        // Another replica may have written since the last read: the store is the truth.
        if (this.sharing) this.records.delete(serverId);
        const tools = await this.load(serverId);
        const result = await work(tools);
        if (save === true || (typeof save === 'function' && save(result))) {
          await this.store.set(KEY_PREFIX + serverId, { version: 1, tools: [...tools.values()] });
          await this.sharing?.changed(serverId);
        }
        return result;
      } finally {
        release?.();
      }
    });
    const settled = run.catch(() => undefined);
    this.queues.set(serverId, settled);
    void settled.then(() => {
      if (this.queues.get(serverId) === settled) this.queues.delete(serverId);
    });
    return run;
  }

  private async load(serverId: string): Promise<Map<string, LedgerEntry>> {
    const cached = this.records.get(serverId);
    if (cached) return cached;
    const raw = await this.store.get(KEY_PREFIX + serverId);
    let tools: LedgerEntry[] = [];
    if (raw !== undefined) {
      const parsed = RecordSchema.safeParse(raw);
      if (!parsed.success) {
        throw new SluiceError(
          RiskErrorCode.LEDGER_UNREADABLE,
          `The risk ledger record of upstream "${serverId}" is malformed`,
          { plugin: 'risk' },
        );
      }
      tools = parsed.data.tools;
    }
    const map = new Map(tools.map((entry) => [entry.name, entry] as const));
    this.records.set(serverId, map);
    return map;
  }
}

interface Hashes {
  readonly hash: string;
  readonly body: string;
  readonly text: string;
}

function tryFingerprints(definition: ToolShape): Hashes | SluiceError {
  try {
    return { hash: fingerprint(definition), body: bodyFingerprint(definition), text: definitionText(definition) };
  } catch (error) {
    if (SluiceError.is(error)) return error;
    throw error;
  }
}

function known(tools: Map<string, LedgerEntry>, serverId: string, toolName: string): LedgerEntry {
  const entry = tools.get(toolName);
  if (entry === undefined) {
    throw new SluiceError(
      RiskErrorCode.UNKNOWN_LEDGER_ENTRY,
      `The ledger has no tool "${toolName}" from upstream "${serverId}"`,
      { plugin: 'risk' },
    );
  }
  return entry;
}

function boundVerdict(verdict: VerdictInput): VerdictInput {
  const hits = verdict.hits.slice(0, MAX_VERDICT_HITS).map((hit) => ({
    pattern: hit.pattern,
    severity: hit.severity,
    surface: hit.surface.slice(0, MAX_SURFACE_CHARS),
  }));
  const judge = verdict.judge;
  return {
    fingerprint: verdict.fingerprint,
    hits,
    ...(judge === undefined
      ? {}
      : {
          judge: {
            poisoned: judge.poisoned,
            reason: judge.reason.slice(0, MAX_REASON_CHARS),
            ...(judge.severity === undefined ? {} : { severity: judge.severity }),
          },
        }),
  };
}

function sameVerdict(kept: LedgerVerdict, next: VerdictInput): boolean {
  return canonicalJson({ ...kept, at: 0 }) === canonicalJson({ ...next, at: 0 });
}

/** Whether a check changes nothing the record keeps: the same definition, still listed. */
function isCurrent(entry: LedgerEntry, { hash, text }: Hashes): boolean {
  return (
    entry.present &&
    entry.seen === hash &&
    entry.definition === text &&
    (entry.approvedDefinition !== undefined || hash !== entry.approved)
  );
}

/**
 * Whether the entry was found redefined to `hash` since its last approval,
 * remembering it if not (the latest `MAX_HELD_KEPT`).
 */
function remembered(entry: LedgerEntry, hash: string): boolean {
  const held = entry.held ?? [];
  if (held.includes(hash)) return true;
  entry.held = [...held, hash].slice(-MAX_HELD_KEPT);
  return false;
}

/**
 * Keeps at most `max` of the tools an upstream stopped listing: past it,
 * those gone longest are forgotten (a tool that comes back after that is
 * new to the ledger). Active tools no operator decided on go first, then
 * those an operator approved, and held or revoked tools last: an upstream
 * that drops a held tool and floods the ledger with junk names must first
 * have more than `max` other tools held or revoked and gone before the held
 * one is forgotten and can come back as new. Listed tools are never
 * forgotten.
 */
function forgetGone(tools: Map<string, LedgerEntry>, max: number): void {
  const gone = [...tools.values()].filter((e) => !e.present);
  if (gone.length <= max) return;
  // A stable sort: tools gone at the same time go in the order the ledger learnt of them.
  gone.sort((a, b) => keptFor(a) - keptFor(b) || (a.goneAt ?? 0) - (b.goneAt ?? 0));
  for (const entry of gone.slice(0, gone.length - max)) tools.delete(entry.name);
}

/** How much a gone tool is worth keeping: held or revoked (2), approved by an operator (1), neither (0). */
function keptFor(entry: LedgerEntry): number {
  if (entry.lifecycle !== 'ACTIVE') return 2;
  return entry.decisions !== undefined && entry.decisions.length > 0 ? 1 : 0;
}

function record(entry: LedgerEntry, decision: LedgerDecision): void {
  entry.decisions = [...(entry.decisions ?? []), decision].slice(-MAX_DECISIONS);
}
