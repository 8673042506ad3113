import { describe, expect, it } from 'vitest';
import { isInputRequired, namesMethod } from '../src/protocol.js';

describe('namesMethod', () => {
  it('tells a message that names the method from every other value', () => {
    expect(namesMethod({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, 'initialize')).toBe(true);
    expect(namesMethod({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }, 'initialize')).toBe(false);
    expect(namesMethod({ jsonrpc: '2.0', id: 1, result: {} }, 'initialize')).toBe(false);
    for (const value of [undefined, null, 'initialize', 42, [], [{ method: 'initialize' }]])
      expect(namesMethod(value, 'initialize')).toBe(false);
  });

  it('compares the method field as it is: an inherited one counts, an object that prints as the name does not', () => {
    const tricky = Object.create({ method: 'initialize' }) as object;
    expect(namesMethod(tricky, 'initialize')).toBe(true);
    expect(namesMethod({ method: { toString: () => 'initialize' } }, 'initialize')).toBe(false);
  });
});

describe('isInputRequired', () => {
  it('is true only for an object whose resultType is input_required', () => {
    expect(isInputRequired({ resultType: 'input_required' })).toBe(true);
    expect(isInputRequired({ resultType: 'complete' })).toBe(false);
    expect(isInputRequired([{ resultType: 'input_required' }])).toBe(false);
    expect(isInputRequired(null)).toBe(false);
  });
});
