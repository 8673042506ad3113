import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PAGE_SIZE, pageOf } from '../src/features/paging.js';

const items = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('the gateway pages its merged lists with its own cursor', () => {
  it('returns every item exactly once across pages, and no cursor on the last page', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 * PAGE_SIZE + 7 }), (n) => {
        const all = items(n);
        const seen: number[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = pageOf('resources', all, cursor);
          seen.push(...page.items);
          cursor = page.nextCursor;
          pages++;
        } while (cursor !== undefined);
        expect(seen).toEqual(all);
        expect(pages).toBe(Math.max(1, Math.ceil(n / PAGE_SIZE)));
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a cursor of another list, or one it did not make, with -32602', () => {
    const cursor = pageOf('prompts', items(PAGE_SIZE + 1), undefined).nextCursor;
    expect(cursor).toBeDefined();
    expect(() => pageOf('resources', items(PAGE_SIZE + 1), cursor)).toThrow(/Invalid cursor/);
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.object()), (hostile) => {
        try {
          const page = pageOf('templates', items(10), hostile);
          // Only a well-formed cursor of this list gets through: then a page, never a throw of another kind.
          expect(Array.isArray(page.items)).toBe(true);
        } catch (error) {
          expect(error).toMatchObject({ code: -32602 });
        }
      }),
    );
    expect(() => pageOf('resources', items(10), 'x'.repeat(10_000))).toThrow(/Invalid cursor/);
  });
});
