import { describe, expect, it } from 'vitest';
import { ChainState } from '../src/chain-state.js';

describe('what a chain remembers', () => {
  it('counts chained calls against maxDepth, the origin excluded', () => {
    const state = new ChainState('a', {}, 2);
    expect([state.depth, state.full]).toEqual([0, false]);
    state.record({ tool: 'b', durationMs: 1, outcome: 'ok' });
    state.record({ tool: 'c', durationMs: 1, outcome: 'ok' });
    expect([state.depth, state.full]).toEqual([2, true]);
  });

  it('knows the origin and every remembered call, in any key order', () => {
    const state = new ChainState('a', { x: 1, y: [1, { z: 2 }] }, 5);
    expect(state.check('a', { y: [1, { z: 2 }], x: 1 }).kind).toBe('repeat');
    expect(state.check('a', { x: 2 }).kind).toBe('new');
    state.remember('b', { q: 'r' });
    expect(state.check('b', { q: 'r' }).kind).toBe('repeat');
  });

  it('serializes arguments only when a tool repeats', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const state = new ChainState('a', {}, 5);
    expect(state.check('b', cyclic).kind).toBe('new');
    expect(state.check('a', cyclic)).toEqual({ kind: 'unusable', message: 'the arguments contain a cycle' });
  });

  it('continues the depth and the calls of an enclosing chain', () => {
    const outer = new ChainState('a', {}, 5);
    outer.remember('b', { n: 1 });
    outer.record({ tool: 'b', durationMs: 1, outcome: 'ok' });
    const inner = new ChainState('c', {}, 5, outer);
    // The outer chain's running step counts: 1 recorded + 1 running.
    expect(inner.depth).toBe(2);
    expect(inner.check('b', { n: 1 }).kind).toBe('repeat');
    expect(outer.check('c', {}).kind).toBe('new');
  });

  it('lists its steps in a record, with the stop when there is one', () => {
    const state = new ChainState('a', {}, 5);
    state.record({ tool: 'b', durationMs: 1, outcome: 'refused', code: 'X' });
    expect(state.toRecord('CHAIN_STEP_REFUSED')).toEqual({
      origin: 'a',
      steps: [{ tool: 'b', durationMs: 1, outcome: 'refused', code: 'X' }],
      stoppedBy: 'CHAIN_STEP_REFUSED',
    });
    expect(state.toRecord()).not.toHaveProperty('stoppedBy');
  });
});
