import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SluiceError, messageOf } from '@sluice/core';
import type { Store } from '@sluice/core';
import { RiskErrorCode } from '../errors.js';

/**
 * Where the ledger keeps its records: the `get`/`set` half of the core
 * `Store`, so the server's store (Redis included) fits as is, and a file
 * fits through `JsonFileStore`.
 */
export type LedgerStore = Pick<Store, 'get' | 'set'>;

interface FileDocument {
  readonly version: 1;
  readonly entries: Array<[string, unknown]>;
}

/**
 * A key-value store in one JSON file, rewritten atomically (written to a
 * temporary file, flushed, then renamed over the old one), so a crash leaves
 * either the old file or the new one, never half of one. Writes are
 * serialized, and the changes made while one is under way share the next:
 * a burst of changes (an import of many upstreams) costs the write under way
 * and one more, not one each. A `set` resolves once a write holding its
 * change is on disk. An unreadable file fails loudly: forgetting approvals
 * silently would let a redefined tool through as new.
 */
export class JsonFileStore implements LedgerStore {
  readonly kind = 'json-file';
  private entries: Promise<Map<string, unknown>> | undefined;
  /** The last write, settled or not. */
  private writing: Promise<void> = Promise.resolve();
  /** The write that has not started yet: every change made before it starts is in it. */
  private next: Promise<void> | undefined;
  private written = 0;

  constructor(readonly path: string) {}

  /** How many times the file has been written. */
  get writes(): number {
    return this.written;
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    const entries = await this.load();
    const value = entries.get(key);
    return value === undefined ? undefined : (structuredClone(value) as T);
  }

  async set(key: string, value: unknown): Promise<void> {
    const entries = await this.load();
    entries.set(key, structuredClone(value));
    await this.save(entries);
  }

  /** The write that will hold the entries as they are now: the one waiting to start, or a new one after the last. */
  private save(entries: Map<string, unknown>): Promise<void> {
    if (this.next !== undefined) return this.next;
    const write = this.writing.then(() => {
      this.next = undefined;
      this.written++;
      const document: FileDocument = { version: 1, entries: [...entries] };
      return writeAtomically(this.path, `${JSON.stringify(document)}\n`);
    });
    this.next = write;
    this.writing = write.catch(() => undefined);
    return write;
  }

  private load(): Promise<Map<string, unknown>> {
    this.entries ??= readDocument(this.path);
    return this.entries;
  }
}

async function readDocument(path: string): Promise<Map<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw unreadable(path, error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw unreadable(path, error);
  }
  const document = parsed as Partial<FileDocument> | null;
  const valid =
    typeof document === 'object' &&
    document !== null &&
    document.version === 1 &&
    Array.isArray(document.entries) &&
    (document.entries as unknown[]).every((e) => Array.isArray(e) && e.length === 2 && typeof e[0] === 'string');
  if (!valid) throw unreadable(path, 'not a ledger file (expected { version: 1, entries: [...] })');
  return new Map(document.entries);
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  try {
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

function unreadable(path: string, cause: unknown): SluiceError {
  return new SluiceError(
    RiskErrorCode.LEDGER_UNREADABLE,
    `The risk ledger at ${path} cannot be read (${messageOf(cause)}); fix or move the file`,
    {
      plugin: 'risk',
      cause,
    },
  );
}
