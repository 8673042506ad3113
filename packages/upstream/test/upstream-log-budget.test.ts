import { describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/server';
import { MAX_SUBSCRIPTIONS, isSubscribed, subscribe, unsubscribe } from '@sluice/core/internal';
import { LogBudget } from '../src/upstream-features.js';

describe("the bound on an upstream's log messages", () => {
  it('relays a burst of 100 at once, then 50 a second, and counts what it dropped', () => {
    let now = 0;
    const budget = new LogBudget(() => now);
    const burst = Array.from({ length: 150 }, () => budget.take().ok);
    expect(burst.filter(Boolean)).toHaveLength(100);
    now += 100; // 100 ms: five more
    const next = Array.from({ length: 10 }, () => budget.take());
    expect(next.filter((t) => t.ok)).toHaveLength(5);
    expect(next[0]).toEqual({ ok: true, droppedBefore: 50 });
    expect(next[1]).toEqual({ ok: true, droppedBefore: 0 });
  });
});

describe('what one client of the gateway subscribed to', () => {
  it('is counted once per URI, forgotten on unsubscribe, and bounded', () => {
    const sdk = new Server({ name: 's', version: '1' }, { capabilities: { resources: { subscribe: true } } });
    expect(subscribe(sdk, 'a://1')).toBe(true);
    expect(subscribe(sdk, 'a://1')).toBe(false);
    expect(isSubscribed(sdk, 'a://1')).toBe(true);
    expect(unsubscribe(sdk, 'a://1')).toBe(true);
    expect(unsubscribe(sdk, 'a://1')).toBe(false);
    for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) subscribe(sdk, `a://${i}`);
    expect(() => subscribe(sdk, 'a://one-too-many')).toThrow(/at most 1000/);
    expect(isSubscribed(new Server({ name: 't', version: '1' }), 'a://1')).toBe(false);
  });
});
