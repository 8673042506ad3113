import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ServerSentEvent } from '../src/sse-parser.js';
import { SseParser } from '../src/sse-parser.js';

function parse(pieces: readonly string[]): { events: ServerSentEvent[]; retries: number[] } {
  const events: ServerSentEvent[] = [];
  const retries: number[] = [];
  const parser = new SseParser(
    (event) => events.push(event),
    (ms) => retries.push(ms),
  );
  for (const piece of pieces) parser.feed(piece);
  return { events, retries };
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

describe('the event-stream parser', () => {
  it('reads event, data, id and retry fields, joins data lines, and skips comments', () => {
    const { events, retries } = parse([': hello\nevent: message\nid: 7\ndata: {"a":\ndata: 1}\nretry: 250\n\n']);
    expect(events).toEqual([{ event: 'message', data: '{"a":\n1}', id: '7' }]);
    expect(retries).toEqual([250]);
  });

  it('dispatches an event only at an empty line, and an event with only an id too (a priming event)', () => {
    expect(parse(['data: x\n']).events).toEqual([]);
    expect(parse(['id: 1\n\n']).events).toEqual([{ event: undefined, data: '', id: '1' }]);
  });

  it('ignores an id holding NUL and a retry that is not a number', () => {
    const { events, retries } = parse(['id: a\0b\nretry: soon\ndata: x\n\n']);
    expect(events).toEqual([{ event: undefined, data: 'x', id: undefined }]);
    expect(retries).toEqual([]);
  });

  it('reads the same events whatever the line endings and wherever the pieces break (fuzzed)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z{}":, ]{0,30}$/), { minLength: 1, maxLength: 10 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.array(fc.nat(), { maxLength: 12 }),
        (datas, eol, cuts) => {
          const stream = datas.map((d, i) => `id: ${i}${eol}data: ${d}${eol}${eol}`).join('');
          const { events } = parse(split(stream, cuts));
          expect(events).toEqual(datas.map((d, i) => ({ event: undefined, data: d, id: String(i) })));
        },
      ),
      { numRuns: 300 },
    );
  });
});
