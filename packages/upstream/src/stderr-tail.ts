/** Lines of an upstream's stderr kept for when it fails. */
export const STDERR_TAIL_LINES = 20;
/** A kept line is cut at this many characters. */
export const STDERR_LINE_CHARS = 500;

/**
 * The last lines a stdio upstream wrote to stderr, bounded in count and
 * length, so that when it fails the gateway can say what it last said
 * (at warn) without keeping or logging everything it ever wrote.
 */
export class StderrTail {
  private lines: string[] = [];
  private partial = '';

  /** Adds a chunk as the child wrote it; a line may span chunks. */
  push(chunk: string): void {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = (parts.pop() ?? '').slice(-STDERR_LINE_CHARS);
    for (const line of parts) if (line.trim().length > 0) this.keep(line);
  }

  /** The kept lines (and an unfinished last one), oldest first; empties the tail. */
  take(): string[] {
    if (this.partial.trim().length > 0) this.keep(this.partial);
    const lines = this.lines;
    this.lines = [];
    this.partial = '';
    return lines;
  }

  private keep(line: string): void {
    this.lines.push(line.length > STDERR_LINE_CHARS ? `${line.slice(0, STDERR_LINE_CHARS)}…` : line);
    if (this.lines.length > STDERR_TAIL_LINES) this.lines.shift();
  }
}
