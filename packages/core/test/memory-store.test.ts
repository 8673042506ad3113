import { describe, expect, it } from 'vitest';
import { MemoryStore } from '@sluice/core';
import { FakeClock } from '../../testing/src/index.js';

describe('the in-memory store', () => {
  it('sweeps expired keys as writes go on: 100,000 one-off counters with a 1 ms TTL do not pile up', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore(clock);
    for (let i = 0; i < 100_000; i++) {
      await store.increment(`window:${i}`, 1, { ttlMs: 1 });
      clock.advance(1);
    }
    // Every counter but the last has expired; the sweep keeps only a small tail of them.
    expect(store.entryCount).toBeLessThan(100);
    expect(await store.get('window:99999')).toBeUndefined();
  });

  it('keeps live entries, with or without a TTL, while it sweeps', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore(clock);
    await store.set('forever', { a: 1 });
    await store.set('long', 'kept', { ttlMs: 1_000_000 });
    for (let i = 0; i < 10_000; i++) {
      await store.set(`short:${i}`, i, { ttlMs: 1 });
      clock.advance(1);
    }
    expect(await store.get('forever')).toEqual({ a: 1 });
    expect(await store.get('long')).toBe('kept');
    expect(await store.increment('count', 2, { ttlMs: 1_000_000 })).toBe(2);
    expect(store.entryCount).toBeLessThan(100);
  });

  it('sweeps what expired while nothing was written, once writes resume', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore(clock);
    for (let i = 0; i < 1_000; i++) await store.setIfAbsent(`once:${i}`, true, { ttlMs: 10 });
    expect(store.entryCount).toBe(1_000);
    clock.advance(11);
    for (let i = 0; i < 1_000; i++) await store.set('hot', i);
    expect(store.entryCount).toBe(1);
  });

  it('counts a window from its first increment to windowMs later, by its own clock', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore(clock);
    expect(await store.incrementWindow('rate', 1_000)).toEqual({ count: 1, resetMs: 1_000 });
    clock.advance(400);
    expect(await store.incrementWindow('rate', 1_000, 2)).toEqual({ count: 3, resetMs: 600 });
    // 0 reads the count; a longer window asked for later does not stretch the one running.
    expect(await store.incrementWindow('rate', 5_000, 0)).toEqual({ count: 3, resetMs: 600 });
    clock.advance(600);
    expect(await store.incrementWindow('rate', 1_000)).toEqual({ count: 1, resetMs: 1_000 });
    // A counter written without a TTL gets the window's.
    await store.set('plain', 7);
    expect(await store.incrementWindow('plain', 50)).toEqual({ count: 8, resetMs: 50 });
    clock.advance(50);
    expect(await store.get('plain')).toBeUndefined();
    // A key holding anything but a whole count starts a window afresh.
    for (const held of [1.5, 'seven', { n: 1 }]) {
      await store.set('odd', held, { ttlMs: 600_000 });
      expect(await store.incrementWindow('odd', 1_000)).toEqual({ count: 1, resetMs: 1_000 });
    }
  });

  it('refuses a window or a step that is not a count, and writes nothing', async () => {
    const store = new MemoryStore(new FakeClock());
    for (const [windowMs, by] of [
      [Number.NaN, 1],
      [Number.POSITIVE_INFINITY, 1],
      [0, 1],
      [-5, 1],
      [1_000, 0.5],
      [1_000, -1],
      [1_000, Number.NaN],
      [1_000, 1e21],
    ]) {
      await expect(store.incrementWindow('rate', windowMs as number, by)).rejects.toThrow(RangeError);
      expect(await store.get('rate')).toBeUndefined();
    }
  });

  it('deletes a key by compare-and-delete only while it holds the value expected', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore(clock);
    await store.set('place', 'old-holder', { ttlMs: 1_000 });
    expect(await store.compareAndDelete('place', 'someone-else')).toBe(false);
    expect(await store.get('place')).toBe('old-holder');
    // The old holder's place lapsed and a newer holder took it: the old holder's release frees nothing.
    clock.advance(1_000);
    expect(await store.setIfAbsent('place', 'new-holder', { ttlMs: 1_000 })).toBe(true);
    expect(await store.compareAndDelete('place', 'old-holder')).toBe(false);
    expect(await store.get('place')).toBe('new-holder');
    expect(await store.compareAndDelete('place', 'new-holder')).toBe(true);
    expect(await store.get('place')).toBeUndefined();
    expect(await store.compareAndDelete('place', 'new-holder')).toBe(false);
    // Numbers and booleans compare by value and type; an object is never equal to a primitive.
    await store.set('n', 7);
    expect(await store.compareAndDelete('n', '7')).toBe(false);
    expect(await store.compareAndDelete('n', 7)).toBe(true);
    await store.set('o', { id: 'x' });
    expect(await store.compareAndDelete('o', 'x')).toBe(false);
    expect(await store.get('o')).toEqual({ id: 'x' });
  });
});
