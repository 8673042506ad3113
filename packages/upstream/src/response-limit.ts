import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/client';
import { jsonSizeBound } from '@sluice/core';
import { MessageMeter } from './message-meter.js';

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
  private counted = false;
  private over = false;
  private hit: number;
  // Made only when a transport needs a signal to stop the call (the fetch-based one).
  private stop: AbortController | undefined;

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
    this.stop ??= new AbortController();
    if (this.over) this.stop.abort();
    return this.stop.signal;
  }

  get exceeded(): boolean {
    return this.over;
  }

  /** Counts bytes read; false (and the call is stopped) once past the limit. */
  take(bytes: number): boolean {
    this.counted = true;
    this.used += bytes;
    if (this.used <= this.limit) return true;
    this.exceed(this.limit);
    return false;
  }

  /** One message of the answer went past the connection's cap: the call is stopped there. */
  overflowMessage(cap: number): void {
    this.exceed(cap);
  }

  /**
   * Checks a result against the limit. When its bytes were counted as they
   * arrived, that count decided already; otherwise a cheap bound clears a
   * result well within the limit, and only one near it is counted exactly.
   */
  admits(result: unknown): boolean {
    if (this.over || this.counted) return !this.over;
    if (jsonSizeBound(result, this.limit) > this.limit && byteLengthOf(result) > this.limit) this.over = true;
    return !this.over;
  }

  private exceed(limit: number): void {
    if (this.over) return;
    this.over = true;
    this.hit = limit;
    this.stop?.abort();
  }
}

function byteLengthOf(value: unknown): number {
  try {
    // JSON.stringify answers undefined for a function or a symbol, whatever its declared type says.
    const text: unknown = JSON.stringify(value);
    return typeof text === 'string' ? Buffer.byteLength(text) : 0;
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
  const meter = new MessageMeter(eventStream, cap);
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (budget && !budget.take(chunk.byteLength)) {
          controller.error(new ResponseTooLargeError(budget.limit));
          return;
        }
        if (!meter.add(chunk)) {
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
 * The per-message cap of one response: the connection's own when it sets
 * one; otherwise 10 MiB, or the call's read budget when its tool allows more
 * (the default guards what nobody sized, not what a tool's limit allows).
 */
export function messageCap(maxMessageBytes: number | undefined, budget: ResponseBudget | undefined): number {
  if (maxMessageBytes !== undefined) return maxMessageBytes;
  return budget && Number.isFinite(budget.limit)
    ? Math.max(DEFAULT_MAX_MESSAGE_BYTES, budget.limit)
    : DEFAULT_MAX_MESSAGE_BYTES;
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
    const cap = messageCap(maxMessageBytes, budget);
    return new Response(countedBody(response.body, eventStream, cap, budget), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
