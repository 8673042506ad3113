import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { callerKeyOf } from '@sluice/core';
import type { CallContext, Store } from '@sluice/core';
import type { PauseRefusal, PausedShares, PausedSlot } from './paused-shares.js';
import type { CallReply } from './sandbox.js';

/** One call a paused script completed: replayed, not made again, when the script resumes. */
export interface JournalEntry {
  /** The call's number in the script (the order the script made its calls). */
  readonly id: number;
  readonly tool: string;
  /** SHA-256 of the arguments' canonical JSON. */
  readonly args: string;
  readonly reply: CallReply;
}

/** The call a script paused at: made for real, once, when the script resumes with the client's answer. */
export interface PendingCall {
  readonly id: number;
  readonly tool: string;
  readonly args: string;
  /** The round state the call answered with (an approval's), shown to it again on resume. */
  readonly state?: string;
}

/** What a paused script leaves in the store. */
export interface Journal {
  readonly v: 1;
  /** SHA-256 of the script's source. */
  readonly source: string;
  /** SHA-256 of the caller (see `callerDigest`). */
  readonly caller: string;
  readonly entries: readonly JournalEntry[];
  readonly pending: PendingCall;
}

/** Why a journal cannot be resumed; each ends the script with a clear error, nothing is replayed. */
export type JournalRefusal = 'altered' | 'expired' | 'used' | 'other-caller' | 'other-source';

/** Every state code mode seals starts with this, so that another party's state (an approval's) is not taken for ours. */
export const JOURNAL_STATE_PREFIX = 'sluice.code.v1.';
const KEY_PREFIX = 'dev.sluice/code-mode/journal/';
/** Far above what `seal` makes; a bound on what a client can make us decode. */
const MAX_STATE_CHARS = 1_024;
// Domain separation: the key may be shared with other uses; a MAC of ours means nothing there.
const CONTEXT = 'dev.sluice/code-mode/journal\u0000';

interface Sealed {
  /** The journal's key in the store. */
  readonly i: string;
  /** SHA-256 of the journal as stored: an edit in the store breaks it. */
  readonly d: string;
  /** Source and caller digests, checked before the store is read. */
  readonly s: string;
  readonly c: string;
  /** When the state lapses (ms since the epoch). */
  readonly e: number;
  /** Where the journal is counted in its caller's and the server's shares (absent from states made before they were). */
  readonly b?: number;
  readonly w?: number;
}

/**
 * The bytes a journal's JSON text takes in a store that writes values as
 * JSON (Redis): the text as a JSON string, every quote, backslash and
 * control character escaped once more. What the shares and `journal.maxBytes`
 * count, so that a reply full of such characters cannot hold twice its share.
 */
export function storedBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text));
}

/** A journal's JSON text and its `storedBytes`, worked out once for the size check and the keeping. */
export interface MeasuredJournal {
  readonly text: string;
  readonly bytes: number;
}

export function measure(journal: Journal): MeasuredJournal {
  const text = JSON.stringify(journal);
  return { text, bytes: storedBytes(text) };
}

/** What `keep` answers: the sealed state that names the journal, or why it could not be kept. */
export type Kept = { readonly state: string } | { readonly refused: PauseRefusal };

/**
 * Journals of paused scripts: kept in the server's store (shared by
 * replicas), bounded in bytes, for at most `ttlMs`, and counted in their
 * caller's and the server's shares (`PausedShares`); the client carries only a
 * sealed reference (HMAC-SHA256 over the store key, the journal's digest, the
 * source's and caller's digests, the lapse and where it is counted). A journal
 * is resumed once, and counted out when it is taken.
 */
export class Journals {
  constructor(
    private readonly store: Store,
    private readonly key: Buffer,
    private readonly now: () => number,
    private readonly ttlMs: number,
    private readonly shares: PausedShares,
  ) {}

  /** Keeps the journal and answers the sealed state that names it, unless its caller's share or the server's is full. */
  async keep(journal: Journal, { text, bytes }: MeasuredJournal = measure(journal)): Promise<Kept> {
    const id = randomBytes(18).toString('base64url');
    const slot = await this.shares.admit(journal.caller, bytes);
    if ('share' in slot) return { refused: slot };
    try {
      await this.store.set(KEY_PREFIX + id, text, { ttlMs: this.ttlMs });
    } catch (error) {
      await this.release(journal.caller, slot, bytes);
      throw error;
    }
    const sealed: Sealed = {
      i: id,
      d: sha256(text),
      s: journal.source,
      c: journal.caller,
      e: this.now() + this.ttlMs,
      b: slot.slice,
      w: slot.width,
    };
    const body = Buffer.from(JSON.stringify(sealed), 'utf8').toString('base64url');
    return { state: `${JOURNAL_STATE_PREFIX}${body}.${this.mac(body)}` };
  }

  /**
   * The journal a state names, taken out of the store (a second resume of the
   * same state finds it gone), or why it cannot be resumed.
   */
  async take(state: string, source: string, caller: string): Promise<Journal | JournalRefusal> {
    const sealed = this.open(state);
    if (sealed === undefined) return 'altered';
    if (sealed.c !== caller) return 'other-caller';
    if (sealed.s !== source) return 'other-source';
    if (this.now() >= sealed.e) return 'expired';
    const key = KEY_PREFIX + sealed.i;
    const text = await this.store.get(key);
    if (typeof text !== 'string') return 'used';
    if (sha256(text) !== sealed.d) return 'altered';
    // Once: whoever deletes it resumes (and counts it out); a concurrent retry with the same state finds it gone.
    if (!(await this.store.delete(key))) return 'used';
    if (sealed.b !== undefined && sealed.w !== undefined)
      await this.release(caller, { slice: sealed.b, width: sealed.w }, storedBytes(text));
    return parseJournal(text, source, caller) ?? 'altered';
  }

  /**
   * Counts a journal out of its shares. A failure is not the resume's: the
   * journal is gone either way, and its count lapses with its slice.
   */
  private async release(caller: string, slot: PausedSlot, bytes: number): Promise<void> {
    await this.shares.release(caller, slot, bytes).catch(() => undefined);
  }

  private open(state: string): Sealed | undefined {
    if (state.length > MAX_STATE_CHARS || !state.startsWith(JOURNAL_STATE_PREFIX)) return undefined;
    const parts = state.slice(JOURNAL_STATE_PREFIX.length).split('.');
    if (parts.length !== 2) return undefined;
    const [body, mac] = parts as [string, string];
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<Sealed>;
      if (
        typeof value.i !== 'string' ||
        typeof value.d !== 'string' ||
        typeof value.s !== 'string' ||
        typeof value.c !== 'string' ||
        typeof value.e !== 'number' ||
        (value.b !== undefined && typeof value.b !== 'number') ||
        (value.w !== undefined && typeof value.w !== 'number')
      )
        return undefined;
      return value as Sealed;
    } catch {
      return undefined;
    }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(CONTEXT).update(body, 'utf8').digest('base64url');
  }
}

/** The journal in a stored text, when it is one and belongs to this source and caller. */
function parseJournal(text: string, source: string, caller: string): Journal | undefined {
  let value: Partial<Journal>;
  try {
    value = JSON.parse(text) as Partial<Journal>;
  } catch {
    return undefined;
  }
  if (value.v !== 1 || value.source !== source || value.caller !== caller) return undefined;
  if (!Array.isArray(value.entries) || !isCall(value.pending)) return undefined;
  if (!value.entries.every((entry) => isCall(entry) && isReply((entry as { reply?: unknown }).reply))) return undefined;
  return value as Journal;
}

function isCall(value: unknown): value is { id: number; tool: string; args: string } {
  const call = value as { id?: unknown; tool?: unknown; args?: unknown } | null;
  return (
    typeof call === 'object' &&
    call !== null &&
    Number.isSafeInteger(call.id) &&
    typeof call.tool === 'string' &&
    typeof call.args === 'string'
  );
}

function isReply(value: unknown): value is CallReply {
  const reply = value as { ok?: unknown; code?: unknown; message?: unknown } | null;
  if (typeof reply !== 'object' || reply === null) return false;
  return (
    reply.ok === true || (reply.ok === false && typeof reply.code === 'string' && typeof reply.message === 'string')
  );
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** SHA-256 of a value's JSON with object keys sorted, so that key order does not matter. */
export function argumentsDigest(args: unknown): string {
  return sha256(canonical(args));
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(',')}}`;
  }
  // Arguments come parsed from JSON: no undefined, function or symbol reaches here.
  return value === undefined ? 'null' : JSON.stringify(value);
}

/**
 * The caller a journal (and a share of slots, CPU and paused scripts) belongs
 * to: the verified caller (`callerKeyOf`: an API key's name or a token's
 * subject, never the OAuth client every user of one app shares), else its
 * session, else nobody in particular.
 */
export function callerDigest(ctx: Pick<CallContext, 'authInfo' | 'mcp'>): string {
  const caller =
    callerKeyOf(ctx.authInfo) ?? (ctx.mcp?.sessionId !== undefined ? `session:${ctx.mcp.sessionId}` : 'anonymous');
  return sha256(caller);
}
