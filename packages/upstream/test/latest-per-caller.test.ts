// The latest consent links and sign-ins a replica keeps per caller: a caller's newest few, for a bounded number of
// callers. Whatever a caller adds, only its own oldest fall out; past the callers bound, the caller idle longest
// falls out with all of its own. Everything added is either kept or handed back to be spent, never lost.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LatestPerCaller } from '../src/oauth/latest-per-caller.js';

/** The same bound, written plainly: callers in the order they last added, each with its items oldest first. */
class Model {
  private readonly callers: Array<{ who: string; items: number[] }> = [];

  constructor(
    private readonly perCaller: number,
    private readonly maxCallers: number,
  ) {}

  add(who: string, item: number): number[] {
    const at = this.callers.findIndex((c) => c.who === who);
    const caller = at === -1 ? { who, items: [] } : (this.callers.splice(at, 1)[0] as { who: string; items: number[] });
    this.callers.push(caller);
    caller.items.push(item);
    const out: number[] = [];
    while (caller.items.length > this.perCaller) out.push(caller.items.shift() as number);
    if (this.callers.length > this.maxCallers) out.push(...(this.callers.shift()?.items ?? []));
    return out;
  }

  held(): number[] {
    return this.callers.flatMap((c) => c.items);
  }
}

describe('the latest things kept per caller', () => {
  it("hands back a caller's oldest past its bound, and the idle caller's all past the callers bound", () => {
    const latest = new LatestPerCaller<string>(2, 2);
    expect(latest.add('ann', 'a1')).toEqual([]);
    expect(latest.add('ann', 'a2')).toEqual([]);
    expect(latest.add('ann', 'a3')).toEqual(['a1']);
    expect(latest.add('bob', 'b1')).toEqual([]);
    // Ann added again: Bob is now the caller idle longest, and a third caller pushes him out.
    expect(latest.add('ann', 'a4')).toEqual(['a2']);
    expect(latest.add('cy', 'c1')).toEqual(['b1']);
  });

  it('keeps every caller its newest, and loses nothing, as the model says', () => {
    const adds = fc.array(fc.constantFrom('ann', 'bob', 'cy', 'dee', 'eve'), { maxLength: 200, size: 'max' });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 4 }), adds, (perCaller, callers, whos) => {
        const latest = new LatestPerCaller<number>(perCaller, callers);
        const model = new Model(perCaller, callers);
        const out: number[] = [];
        for (const [item, who] of whos.entries()) {
          // Only the adding caller's own oldest fall out, and the whole of a caller idle longest when it is forgotten.
          const spent = latest.add(who, item);
          expect(spent).toEqual(model.add(who, item));
          out.push(...spent);
        }
        const held = model.held();
        expect(held.length).toBeLessThanOrEqual(perCaller * callers);
        expect([...held, ...out].sort((a, b) => a - b)).toEqual(whos.map((_, item) => item));
      }),
      { numRuns: 300 },
    );
  });
});
