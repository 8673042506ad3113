// Each upstream's share of the lines the plugin writes about what it lists: a hostile upstream redefining its
// tools on a timer wrote 5.6 MB of HashLedgerMismatch and CompositionLifecycle lines in 10 s. Past its share a
// line about the upstream is left out, and one line a window says how many.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeClock, captureLogger } from '@sluice/testing';
import type { LogRecord } from '@sluice/testing';
import { RiskEvent } from '@sluice/plugin-risk';
import { UpstreamLines } from '../src/upstream-lines.js';

function setUp(maxLines: number, windowMs = 60_000, level = 'trace') {
  const clock = new FakeClock(1_700_000_070_000);
  const logs = captureLogger();
  logs.logger.level = level;
  const lines = new UpstreamLines(logs.logger, clock, { maxLines, windowMs }, new Set(['local']));
  return { clock, logs, logger: lines.logger };
}

const summaries = (records: LogRecord[]) => records.filter((r) => r.event === RiskEvent.UPSTREAM_LINES_SUPPRESSED);

describe("an upstream's share of the plugin's lines", () => {
  it('writes at most the share about one upstream in a window, then one line that says how many were left out', () => {
    const { clock, logs, logger } = setUp(3);
    for (let i = 0; i < 10; i++) logger.warn({ event: 'HashLedgerMismatch', server: 'flip', tool: `t${i}` }, 'changed');
    // Its prompts are the same upstream; another upstream, the server's own tools and lines naming none have their own.
    logger.warn({ event: 'CompositionLifecycle', server: 'flip#prompts', tool: 'p' }, 'held');
    logger.warn({ event: 'CompositionLifecycle', server: 'calm', tool: 'x' }, 'held');
    logger.warn({ event: 'CompositionLifecycle', server: 'local', tool: 'y' }, 'skipped');
    logger.info({ event: 'other' }, 'no upstream');
    expect(logs.records.map((r) => [r.server, r.tool])).toEqual([
      ['flip', 't0'],
      ['flip', 't1'],
      ['flip', 't2'],
      ['calm', 'x'],
      ['local', 'y'],
      [undefined, undefined],
    ]);
    expect(summaries(logs.records)).toEqual([]);
    clock.advance(50_000);
    expect(summaries(logs.records)).toMatchObject([
      {
        level: 40,
        server: 'flip',
        count: 8,
        limit: 3,
        windowMs: 60_000,
        since: '2023-11-14T22:14:00.000Z',
        msg: '8 more lines about upstream "flip" left out in the minute from 2023-11-14T22:14:00.000Z (at most 3 a minute)',
      },
    ]);
    logger.warn({ event: 'HashLedgerMismatch', server: 'flip', tool: 'next' }, 'changed');
    expect(logs.records.at(-1)).toMatchObject({ tool: 'next' });
  });

  it('counts the holds among the lines left out, so that lines an upstream chose cannot hide a hold unseen', () => {
    // Attack: an upstream redefines junk tools first, spending its share, then the tool it means to change.
    const { clock, logs, logger } = setUp(3);
    for (let i = 0; i < 5; i++) logger.info({ event: 'CompositionLifecycle', server: 'flip', phase: 'exposed' }, 'x');
    logger.warn({ event: 'CompositionLifecycle', server: 'flip', tool: 'pay', phase: 'held' }, 'held');
    logger.warn({ event: 'CompositionLifecycle', server: 'flip', tool: 'pay', phase: 'revoked' }, 'revoked');
    logger.warn({ event: 'HashLedgerMismatch', server: 'flip', tool: 'pay' }, 'changed');
    clock.advance(60_000);
    expect(summaries(logs.records)).toMatchObject([
      {
        server: 'flip',
        count: 5,
        holds: 2,
        msg: '5 more lines about upstream "flip" left out in the minute from 2023-11-14T22:14:00.000Z (at most 3 a minute), 2 of them holds (the ledger lists every hold)',
      },
    ]);
  });

  it('does not charge a line the logger would drop', () => {
    const { logs, logger } = setUp(2, 60_000, 'info');
    for (let i = 0; i < 50; i++) logger.debug({ event: 'CompositionLifecycle', server: 'flip', phase: 'exposed' }, 'x');
    logger.warn({ event: 'HashLedgerMismatch', server: 'flip' }, 'changed');
    logger.warn({ event: 'HashLedgerMismatch', server: 'flip' }, 'changed');
    expect(logs.records.filter((r) => r.event === 'HashLedgerMismatch')).toHaveLength(2);
  });

  it('writes exactly what a model of the shares admits, for any run of lines and clock moves (fast-check)', () => {
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('line' as const),
        server: fc.constantFrom('a', 'b', 'a#prompts', 'local', undefined),
        level: fc.constantFrom('debug' as const, 'info' as const, 'warn' as const),
        phase: fc.constantFrom('held', 'revoked', 'exposed', undefined),
      }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 90_000 }) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(1_000, 60_000),
        fc.array(step, { maxLength: 80 }),
        (maxLines, windowMs, steps) => {
          const { clock, logs, logger } = setUp(maxLines, windowMs, 'info');
          // The model: per upstream and window, the first maxLines written lines pass; once the window has
          // ended, a window that left lines out says how many (windows ending together, in the order they filled).
          const expected: string[] = [];
          const counts = new Map<string, { start: number; count: number; holds: number }>();
          const pending: Array<{ upstream: string; window: { start: number; count: number; holds: number } }> = [];
          let now = clock.now();
          steps.forEach((s, i) => {
            if (s.kind === 'advance') {
              const target = now + s.ms;
              const due = pending
                .filter((p) => p.window.start + windowMs <= target)
                .sort((x, y) => x.window.start - y.window.start);
              for (const p of due) {
                expected.push(`suppressed ${p.upstream} ${p.window.count - maxLines} ${p.window.holds}`);
                pending.splice(pending.indexOf(p), 1);
              }
              now = target;
              clock.advance(s.ms);
              return;
            }
            const fields = {
              event: s.phase === undefined ? 'e' : 'CompositionLifecycle',
              id: i,
              ...(s.phase === undefined ? {} : { phase: s.phase }),
              ...(s.server === undefined ? {} : { server: s.server }),
            };
            logger[s.level](fields, 'm');
            if (s.level === 'debug') return;
            const upstream = s.server?.split('#')[0];
            if (upstream === undefined || upstream === 'local') {
              expected.push(`line ${i}`);
              return;
            }
            const start = Math.floor(now / windowMs) * windowMs;
            let window = counts.get(upstream);
            if (window === undefined || window.start !== start) {
              window = { start, count: 0, holds: 0 };
              counts.set(upstream, window);
            }
            window.count++;
            if (window.count === maxLines + 1) pending.push({ upstream, window });
            if (window.count <= maxLines) expected.push(`line ${i}`);
            else if (s.phase === 'held' || s.phase === 'revoked') window.holds++;
          });
          const written = logs.records.map((r) =>
            r.event === RiskEvent.UPSTREAM_LINES_SUPPRESSED
              ? `suppressed ${String(r.server)} ${String(r.count)} ${String(r.holds)}`
              : `line ${String(r.id)}`,
          );
          expect(written).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
