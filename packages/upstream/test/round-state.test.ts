import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RoundStateSeal } from '../src/round-state.js';

describe("an upstream's requestState sealed between rounds", () => {
  it('opens to the same upstream state for the same upstream and tool', () => {
    const seal = new RoundStateSeal();
    fc.assert(
      fc.property(fc.string({ maxLength: 500 }), (state) => {
        const wire = seal.seal({ upstream: 'up', tool: 'ask', state });
        expect(RoundStateSeal.isOurs(wire)).toBe(true);
        expect(seal.open(wire, 'up', 'ask')).toEqual({ upstream: 'up', tool: 'ask', state });
      }),
    );
    expect(seal.open(seal.seal({ upstream: 'up', tool: 'ask' }), 'up', 'ask')).toEqual({ upstream: 'up', tool: 'ask' });
  });

  it('refuses it for another upstream or tool, altered, from another key, or expired', () => {
    let now = 1_000;
    const seal = new RoundStateSeal(Buffer.alloc(32, 1), () => now);
    const wire = seal.seal({ upstream: 'up', tool: 'ask', state: 'abc' });
    expect(seal.open(wire, 'other', 'ask')).toMatch(/another upstream or tool/);
    expect(seal.open(wire, 'up', 'other')).toMatch(/another upstream or tool/);
    expect(new RoundStateSeal(Buffer.alloc(32, 2)).open(wire, 'up', 'ask')).toMatch(/altered/);
    fc.assert(
      fc.property(fc.integer({ min: 10, max: wire.length - 1 }), fc.string({ minLength: 1, maxLength: 1 }), (at, c) => {
        fc.pre(wire[at] !== c);
        const altered = wire.slice(0, at) + c + wire.slice(at + 1);
        expect(typeof seal.open(altered, 'up', 'ask')).toBe('string');
      }),
    );
    now += 11 * 60_000;
    expect(seal.open(wire, 'up', 'ask')).toMatch(/expired/);
    expect(seal.open(`sluice.v1.${'x'.repeat(70_000)}`, 'up', 'ask')).toMatch(/too long/);
  });

  it('does not take a state another party minted for its own', () => {
    expect(RoundStateSeal.isOurs('eyJhbGciOi.approval')).toBe(false);
  });
});
