import { describe, expect, it } from 'vitest';
import { AwakeWaits } from '../src/worker-protocol.js';

/** How many of the next `n` waits would be tried awake. */
function tried(waits: AwakeWaits, n: number): number {
  let count = 0;
  for (let i = 0; i < n; i++) if (waits.shouldTry()) count++;
  return count;
}

describe('AwakeWaits', () => {
  it('waits awake while answers come in time', () => {
    const waits = new AwakeWaits();
    for (let i = 0; i < 100; i++) {
      expect(waits.shouldTry()).toBe(true);
      waits.hit();
    }
  });

  it('keeps trying after one or two misses in a row', () => {
    const waits = new AwakeWaits();
    waits.miss();
    waits.miss();
    waits.hit();
    waits.miss();
    waits.miss();
    expect(tried(waits, 5)).toBe(5);
  });

  it('skips the next 8 waits after three misses in a row, then tries again', () => {
    const waits = new AwakeWaits();
    waits.miss();
    waits.miss();
    waits.miss();
    expect(tried(waits, 8)).toBe(0);
    expect(waits.shouldTry()).toBe(true);
  });

  it('skips twice as many after each further run of misses, up to 256, until an answer comes in time', () => {
    const waits = new AwakeWaits();
    const skipped: number[] = [];
    for (let run = 0; run < 7; run++) {
      for (let i = 0; i < 3; i++) waits.miss();
      let skips = 0;
      while (!waits.shouldTry()) skips++;
      skipped.push(skips);
    }
    expect(skipped).toEqual([8, 16, 32, 64, 128, 256, 256]);
    waits.hit();
    for (let i = 0; i < 3; i++) waits.miss();
    expect(tried(waits, 8)).toBe(0);
    expect(waits.shouldTry()).toBe(true);
  });
});
