import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_MESSAGE_BYTES, ResponseBudget, budgetedFetch, withResponseBudget } from '../src/response-limit.js';

/** A fetch answering with these chunks, as an upstream's socket would deliver them. */
const answering =
  (chunks: readonly string[], contentType: string): typeof fetch =>
  async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
          controller.close();
        },
      }),
      { headers: { 'content-type': contentType } },
    );

async function read(chunks: readonly string[], contentType: string, cap: number): Promise<string | Error> {
  const response = await budgetedFetch(cap, answering(chunks, contentType))('http://upstream.test/mcp', {
    method: 'GET',
  });
  try {
    return await response.text();
  } catch (error) {
    return error as Error;
  }
}

/** Cuts a text into pieces at the given offsets. */
function split(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of points) {
    pieces.push(text.slice(from, point));
    from = point;
  }
  pieces.push(text.slice(from));
  return pieces;
}

const event = (data: string, crlf: boolean): string => (crlf ? `data: ${data}\r\n\r\n` : `data: ${data}\n\n`);

describe('the read cap on HTTP upstream messages', () => {
  it('counts an event stream event by event, wherever the chunks break (fuzzed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.stringMatching(/^[a-z]{0,50}$/), { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (datas, crlf, cuts) => {
          const stream = datas.map((d) => event(d, crlf)).join('');
          // Every event fits in 64 bytes; the stream as a whole may not.
          expect(await read(split(stream, cuts), 'text/event-stream', 64)).toBe(stream);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('stops at the first event past the cap, wherever the chunks break (fuzzed)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 5 }), fc.array(fc.nat(), { maxLength: 10 }), async (before, cuts) => {
        const stream = [...Array.from({ length: before }, () => event('ok', false)), event('x'.repeat(200), false)];
        const result = await read(split(stream.join(''), cuts), 'text/event-stream', 64);
        expect(result).toBeInstanceOf(Error);
        expect((result as Error).message).toContain('64 bytes');
      }),
      { numRuns: 200 },
    );
  });

  it('counts a JSON answer as one message', async () => {
    expect(await read(['{"a":', '"12345"}'], 'application/json', 64)).toBe('{"a":"12345"}');
    expect(await read(['{"a":"', 'x'.repeat(100), '"}'], 'application/json', 64)).toBeInstanceOf(Error);
  });

  describe("beside a call's read budget", () => {
    const MiB = 1024 * 1024;
    const big = ['{"a":"', 'x'.repeat(12 * MiB), '"}'];

    async function post(cap: number | undefined, budget: number): Promise<string | Error> {
      const response = await withResponseBudget(new ResponseBudget(budget), () =>
        budgetedFetch(cap, answering(big, 'application/json'))('http://upstream.test/mcp', { method: 'POST' }),
      );
      try {
        return await response.text();
      } catch (error) {
        return error as Error;
      }
    }

    it('lets a call whose tool allows more read past the default cap', async () => {
      expect(12 * MiB).toBeGreaterThan(DEFAULT_MAX_MESSAGE_BYTES);
      expect(await post(undefined, 32 * MiB)).toHaveLength(12 * MiB + 8);
    });

    it("holds a connection's explicit cap even when the tool allows more", async () => {
      const result = await post(4 * MiB, 32 * MiB);
      expect(result).toBeInstanceOf(Error);
      expect((result as Error).message).toContain(String(4 * MiB));
    });

    it('holds the default cap when the tool allows less than it', async () => {
      const result = await post(undefined, 2 * MiB);
      expect(result).toBeInstanceOf(Error);
      expect((result as Error).message).toContain(String(2 * MiB));
    });
  });
});
