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
});
const RecordSchema = z.object({ version: z.literal(1), tools: z.array(EntrySchema) });

/** What the ledger holds for one tool of one upstream. */
export type LedgerEntry = z.infer<typeof EntrySchema>;

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
  ) {}

  /** Checks one definition (and records it). No rename or removal tracking: use `checkAll` for a whole list. */
  check(serverId: string, definition: ToolShape): Promise<LedgerCheck> {
    return this.serialized(serverId, async (tools) => {
      const hash = fingerprint(definition);
      const body = bodyFingerprint(definition);
      const existing = tools.get(definition.name);
      return existing ? this.compare(existing, hash, body) : this.create(tools, definition.name, hash, body);
    });
  }

  /** Checks an upstream's complete tool list: changes, new tools, renames and removals. */
  checkAll(serverId: string, definitions: readonly ToolShape[]): Promise<LedgerBatch> {
    return this.serialized(serverId, async (tools) => {
      const results = new Map<string, LedgerCheck | SluiceError>();
      const fresh: Array<{ name: string; hash: string; body: string }> = [];
      for (const definition of definitions) {
        const hashes = tryFingerprints(definition);
        if (SluiceError.is(hashes)) results.set(definition.name, hashes);
        else {
          const existing = tools.get(definition.name);
          if (existing) results.set(definition.name, this.compare(existing, hashes.hash, hashes.body));
          else fresh.push({ name: definition.name, ...hashes });
        }
      }
      const listed = new Set(definitions.map((d) => d.name));
      const vanished = [...tools.values()].filter((e) => e.present && !listed.has(e.name));
      const renames: Array<{ from: string; to: string }> = [];
      for (const tool of fresh) {
        const from = vanished.find((e) => e.body === tool.body && !renames.some((r) => r.from === e.name));
        const check = this.create(tools, tool.name, tool.hash, tool.body, from);
        if (from) renames.push({ from: from.name, to: tool.name });
        results.set(tool.name, check);
      }
      for (const entry of vanished) entry.present = false;
      return {
        results,
        renames,
        removed: vanished.filter((e) => !renames.some((r) => r.from === e.name)).map((e) => e.name),
      };
    });
  }

  /** Accepts the definition last seen: calls may run again. */
  approveRereview(serverId: string, toolName: string): Promise<LedgerEntry> {
    return this.serialized(serverId, async (tools) => {
      const entry = known(tools, serverId, toolName);
      entry.approved = entry.seen;
      entry.lifecycle = 'ACTIVE';
      entry.approvedAt = this.now();
      return { ...entry };
    });
  }

  /** Stops calls to the tool until it is approved again, whatever its definition. */
  revoke(serverId: string, toolName: string): Promise<LedgerEntry> {
    return this.serialized(serverId, async (tools) => {
      const entry = known(tools, serverId, toolName);
      entry.lifecycle = 'REVOKED';
      entry.changedAt = this.now();
      return { ...entry };
    });
  }

  /** The lifecycle in memory, without a read: undefined until the upstream was loaded. */
  lifecycle(serverId: string, toolName: string): Lifecycle | undefined {
    return this.records.get(serverId)?.get(toolName)?.lifecycle;
  }

  /** Every entry of one upstream (read again from the store when it is shared). */
  async entries(serverId: string): Promise<LedgerEntry[]> {
    return this.serialized(serverId, async (tools) => [...tools.values()].map((e) => ({ ...e })), false);
  }

  private compare(entry: LedgerEntry, hash: string, body: string): LedgerCheck {
    const previous = entry.seen;
    entry.seen = hash;
    entry.body = body;
    entry.present = true;
    if (hash !== previous) entry.changedAt = this.now();
    const matches = hash === entry.approved;
    // Back to the approved definition: nothing is left to review. A revocation outlives any definition.
    if (entry.lifecycle !== 'REVOKED') entry.lifecycle = matches ? 'ACTIVE' : 'AWAITING_REREVIEW';
    return {
      status: matches ? 'UNCHANGED' : 'MISMATCH',
      lifecycle: entry.lifecycle,
      hash,
      approved: entry.approved,
      previous,
    };
  }

  private create(
    tools: Map<string, LedgerEntry>,
    name: string,
    hash: string,
    body: string,
    renamedFrom?: LedgerEntry,
  ): LedgerCheck {
    // A rename cannot launder a hold: the new name inherits it.
    const lifecycle = renamedFrom && renamedFrom.lifecycle !== 'ACTIVE' ? renamedFrom.lifecycle : 'ACTIVE';
    tools.set(name, { name, approved: hash, seen: hash, body, lifecycle, present: true, firstSeenAt: this.now() });
    return {
      status: 'NEW',
      lifecycle,
      hash,
      approved: hash,
      ...(renamedFrom ? { renamedFrom: renamedFrom.name } : {}),
    };
  }

  private serialized<T>(
    serverId: string,
    work: (tools: Map<string, LedgerEntry>) => Promise<T>,
    save = true,
  ): Promise<T> {
    const previous = this.queues.get(serverId) ?? Promise.resolve();
    const run = previous.then(async () => {
      const release = save ? await this.sharing?.lock(serverId) : undefined;
      try {
        // Another replica may have written since the last read: the store is the truth.
        if (this.sharing) this.records.delete(serverId);
        const tools = await this.load(serverId);
        const result = await work(tools);
        if (save) {
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

function tryFingerprints(definition: ToolShape): { hash: string; body: string } | SluiceError {
  try {
    return { hash: fingerprint(definition), body: bodyFingerprint(definition) };
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
