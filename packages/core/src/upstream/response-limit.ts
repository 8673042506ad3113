import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/client';

/** The largest single message read from an upstream when its connection sets none: stdio's default too. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * How many response bytes one proxied call may still read. What holds per
 * transport:
 *
 * - `http` (Streamable HTTP): each call's response body is counted as it
 *   streams in, and reading stops at the first byte past the limit; the
 *   upstream never makes Sluice buffer more than the limit. Every response
 *   and every event of the standalone GET stream is also held to the
 *   connection's `maxMessageBytes`, with or without a tool limit: a JSON
 *   answer as a whole, an event stream event by event. Left unset, the cap
 *   is 10 MiB, or the call's read budget when the tool allows more.
 * - `stdio`: the SDK transport reads one message at a time, bounded by the
 *   connection's `maxMessageBytes` (10 MiB by default; a larger message closes
 *   the connection). The tool's limit is checked on the message once read.
 * - `sse` (legacy): all answers share one event stream; the tool's limit is
 *   checked on the answer once read.
 * - `in-process`: no bytes cross a wire; the limit is checked on the result.
 */
export class ResponseBudget {
  private used = 0;
  private over = false;
  private hit: number;
  private readonly stop = new AbortController();

  /** `limit`: the call's total, or infinite when only the per-message cap applies. */
  constructor(readonly limit: number) {
    this.hit = limit;
  }

  /** The limit that was exceeded: the call's total, or the connection's per-message cap. */
  get exceededLimit(): number {
    return this.hit;
  }

  /** Aborts once the budget is exceeded: pass it to the request so the call ends there. */
  get signal(): AbortSignal {
    return this.stop.signal;
  }

  get exceeded(): boolean {
    return this.over;
  }

  /** Counts bytes read; false (and the call is stopped) once past the limit. */
  take(bytes: number): boolean {
    this.used += bytes;
    if (this.used <= this.limit) return true;
    if (!this.over) {
      this.over = true;
      this.stop.abort();
    }
    return false;
  }

  /** One message of the answer went past the connection's cap: the call is stopped there. */
  overflowMessage(cap: number): void {
    if (this.over) return;
    this.over = true;
    this.hit = cap;
    this.stop.abort();
  }

  /** Checks a result already read against the limit. */
  admits(result: unknown): boolean {
    if (!this.over && byteLengthOf(result) > this.limit) this.over = true;
    return !this.over;
  }
}

function byteLengthOf(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

// The budget of the call whose request a fetch is sending: the SDK sends from within the call's async context.
const budgets = new AsyncLocalStorage<ResponseBudget>();

/** Runs `send` with `budget` applying to the HTTP responses it reads. */
export function withResponseBudget<T>(budget: ResponseBudget, send: () => Promise<T>): Promise<T> {
  return budgets.run(budget, send);
}

/** The error a counted body fails with once over budget. */
export class ResponseTooLargeError extends Error {
  constructor(limit: number) {
    super(`The response exceeded ${limit} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

const LF = 10;
const CR = 13;

/**
 * Counts a response body against the per-message cap (an event stream
 * event by event, anything else as a whole) and, for a call's POST, against
 * the call's budget. Past either, the body errors, which cancels the
 * underlying stream: nothing more is read from the socket.
 */
function countedBody(
  body: ReadableStream<Uint8Array>,
  eventStream: boolean,
  cap: number,
  budget: ResponseBudget | undefined,
): ReadableStream<Uint8Array> {
  // Bytes of the message (or event) so far, and of the current line of an event stream.
  let inMessage = 0;
  let lineBytes = 0;
  let lineStartsWithCR = false;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (budget && !budget.take(chunk.byteLength)) {
          controller.error(new ResponseTooLargeError(budget.limit));
          return;
        }
        let over = false;
        if (!eventStream) {
          inMessage += chunk.byteLength;
          over = inMessage > cap;
        } else {
          let from = 0;
          for (let i = chunk.indexOf(LF); i !== -1 && !over; i = chunk.indexOf(LF, i + 1)) {
            if (i > from) {
              if (lineBytes === 0) lineStartsWithCR = chunk[from] === CR;
              lineBytes += i - from;
            }
            // An empty line (LF or CR LF) ends an event: the next one starts from zero.
            const empty = lineBytes === 0 || (lineBytes === 1 && lineStartsWithCR);
            inMessage = empty ? 0 : inMessage + lineBytes + 1;
            over = inMessage > cap;
            lineBytes = 0;
            from = i + 1;
          }
          if (!over && from < chunk.byteLength) {
            if (lineBytes === 0) lineStartsWithCR = chunk[from] === CR;
            lineBytes += chunk.byteLength - from;
            over = inMessage + lineBytes > cap;
          }
        }
        if (over) {
          budget?.overflowMessage(cap);
          controller.error(new ResponseTooLargeError(cap));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * A fetch whose responses are held to `maxMessageBytes` per message and
 * whose POST responses are also counted against the budget of the call
 * that sent them. Without an explicit `maxMessageBytes`, a call whose tool
 * has a larger read budget may read a message up to that budget: the
 * default cap guards what nobody sized, not what a tool's limit allows.
 */
export function budgetedFetch(maxMessageBytes?: number, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const budget = init?.method === 'POST' ? budgets.getStore() : undefined;
    const response = await base(url, init);
    if (response.body === null) return response;
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const cap =
      maxMessageBytes ??
      (budget && Number.isFinite(budget.limit)
        ? Math.max(DEFAULT_MAX_MESSAGE_BYTES, budget.limit)
        : DEFAULT_MAX_MESSAGE_BYTES);
    return new Response(countedBody(response.body, eventStream, cap, budget), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
