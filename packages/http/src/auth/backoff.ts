/** The first wait after a failure; each further failure doubles it. */
const FIRST_WAIT_MS = 1_000;
/** The longest wait between two attempts while the authorization server keeps failing. */
const MAX_WAIT_MS = 60_000;

/**
 * Negative caching for requests to the authorization server: after a
 * failure, nothing is sent until a wait has passed (1 s, doubling to 60 s
 * while failures go on), so an outage is not met with one request per
 * incoming call. A success ends the backoff.
 */
export class Backoff {
  private failures = 0;
  private until = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether a request may go out now. */
  get open(): boolean {
    return this.now() >= this.until;
  }

  failed(): void {
    this.failures++;
    this.until = this.now() + Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(this.failures - 1, 16));
  }

  succeeded(): void {
    this.failures = 0;
    this.until = 0;
  }

  /** Runs `request` unless waiting; a rejection (or an answer `isFailure` says failed) starts or extends the wait. */
  async run<T>(
    request: () => Promise<T>,
    closed: () => Error,
    isFailure: (value: T) => boolean = () => false,
  ): Promise<T> {
    if (!this.open) throw closed();
    let value: T;
    try {
      value = await request();
    } catch (error) {
      this.failed();
      throw error;
    }
    if (isFailure(value)) this.failed();
    else this.succeeded();
    return value;
  }
}
