const LF = 10;
const CR = 13;

/**
 * Counts the bytes of one upstream response against the per-message cap as
 * they arrive: an event stream event by event (an empty line ends an event),
 * anything else as a whole. It keeps only counters, so chunks can be dropped
 * or passed on as soon as they are counted.
 */
export class MessageMeter {
  // Bytes of the message (or event) so far, and of the current line of an event stream.
  private inMessage = 0;
  private lineBytes = 0;
  private lineStartsWithCR = false;

  constructor(
    private readonly eventStream: boolean,
    readonly cap: number,
  ) {}

  /** Counts a chunk; false once the message (or the current event) is past the cap. */
  add(chunk: Uint8Array): boolean {
    if (!this.eventStream) {
      this.inMessage += chunk.byteLength;
      return this.inMessage <= this.cap;
    }
    let from = 0;
    for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) {
      if (i > from) {
        if (this.lineBytes === 0) this.lineStartsWithCR = chunk[from] === CR;
        this.lineBytes += i - from;
      }
      // An empty line (LF or CR LF) ends an event: the next one starts from zero.
      const empty = this.lineBytes === 0 || (this.lineBytes === 1 && this.lineStartsWithCR);
      this.inMessage = empty ? 0 : this.inMessage + this.lineBytes + 1;
      if (this.inMessage > this.cap) return false;
      this.lineBytes = 0;
      from = i + 1;
    }
    if (from < chunk.byteLength) {
      if (this.lineBytes === 0) this.lineStartsWithCR = chunk[from] === CR;
      this.lineBytes += chunk.byteLength - from;
      return this.inMessage + this.lineBytes <= this.cap;
    }
    return true;
  }
}
