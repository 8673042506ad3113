import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/client';

/**
 * How many response bytes one proxied call may still read. What holds per
 * transport:
 *
 * - `http` (Streamable HTTP): each call's response body is counted as it
 *   streams in, and reading stops at the first byte past the limit; the
 *   upstream never makes Sluice buffer more than the limit.
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
  private readonly stop = new AbortController();

  constructor(readonly limit: number) {}

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

/**
 * A fetch whose POST responses are counted against the budget of the call
 * that sent them. Past the budget the body errors, which cancels the
 * underlying stream: nothing more is read from the socket.
 */
export function budgetedFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const budget = init?.method === 'POST' ? budgets.getStore() : undefined;
    const response = await base(url, init);
    if (budget === undefined || response.body === null) return response;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (budget.take(chunk.byteLength)) controller.enqueue(chunk);
          else controller.error(new ResponseTooLargeError(budget.limit));
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
