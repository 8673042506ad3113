// #region writer
import { appendFileSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/** One line of the audit file. */
export interface AuditRecord {
  readonly time: string;
  readonly tool: string;
  readonly status: string;
  readonly code?: string;
  readonly durationMs: number;
  readonly requestId?: string | number;
  readonly arguments?: Record<string, unknown>;
}

/** Appends JSON lines synchronously, so that a record exists before the call's result leaves. */
export class JsonlWriter {
  constructor(private readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
  }

  /** Throws when the file cannot be opened for appending (a directory, no permission, a full disk). */
  probe(): void {
    closeSync(openSync(this.file, 'a'));
  }

  write(record: AuditRecord): void {
    appendFileSync(this.file, `${JSON.stringify(record)}\n`);
  }
}

/**
 * Remembers whether the file could be written, and looks again at most once
 * per `recheckMs`, so a healthy trail costs no extra system call per call.
 */
export class WriterHealth {
  private failedAt: number | undefined;

  constructor(
    private readonly writer: JsonlWriter,
    private readonly now: () => number,
    private readonly recheckMs = 1_000,
  ) {
    this.check();
  }

  writable(): boolean {
    if (this.failedAt !== undefined && this.now() - this.failedAt >= this.recheckMs) this.check();
    return this.failedAt === undefined;
  }

  write(record: AuditRecord): void {
    try {
      this.writer.write(record);
    } catch {
      this.failedAt = this.now();
    }
  }

  private check(): void {
    try {
      this.writer.probe();
      this.failedAt = undefined;
    } catch {
      this.failedAt = this.now();
    }
  }
}
// #endregion writer
