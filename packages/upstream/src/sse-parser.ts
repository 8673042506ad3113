/** One server-sent event: its `event` type, `data` lines joined with LF, and `id` when it carried one. */
export interface ServerSentEvent {
  readonly event: string | undefined;
  readonly data: string;
  readonly id: string | undefined;
}

/**
 * Parses a `text/event-stream` body fed in decoded pieces, wherever they
 * break. It holds at most one unfinished line and one unfinished event: the
 * caller bounds both by counting the bytes of each event before feeding them.
 */
export class SseParser {
  private partial = '';
  private data: string[] = [];
  private event: string | undefined;
  private id: string | undefined;
  private fields = false;
  // A CR ended the last piece: an LF opening the next one belongs to it.
  private afterCR = false;

  constructor(
    private readonly onEvent: (event: ServerSentEvent) => void,
    private readonly onRetry?: (ms: number) => void,
  ) {}

  feed(text: string): void {
    let from = 0;
    if (this.afterCR && text.startsWith('\n')) from = 1;
    this.afterCR = false;
    for (;;) {
      const lf = text.indexOf('\n', from);
      const cr = text.indexOf('\r', from);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      this.line(this.partial + text.slice(from, end));
      this.partial = '';
      if (end === cr) {
        if (end + 1 === text.length) this.afterCR = true;
        from = text[end + 1] === '\n' ? end + 2 : end + 1;
      } else from = end + 1;
    }
    this.partial += text.slice(from);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.fields = true;
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.onRetry?.(Number(value));
  }

  private dispatch(): void {
    if (this.fields) this.onEvent({ event: this.event, data: this.data.join('\n'), id: this.id });
    this.data = [];
    this.event = undefined;
    this.id = undefined;
    this.fields = false;
  }
}
