import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../src/admin/login-throttle.js';

function throttle(maxAddresses?: number) {
  const clock = { now: 0 };
  return { clock, t: new LoginThrottle({ maxFailures: 3, windowMs: 60_000 }, () => clock.now, maxAddresses) };
}

describe('the failed-login limit', () => {
  it('refuses an address after maxFailures until its window ends, then lets it try again', () => {
    const { clock, t } = throttle();
    for (let i = 0; i < 3; i++) {
      expect(t.waitMs('10.0.0.1')).toBe(0);
      t.fail('10.0.0.1');
      clock.now += 1_000;
    }
    expect(t.waitMs('10.0.0.1')).toBe(57_000);
    expect(t.waitMs('10.0.0.2')).toBe(0);
    clock.now = 60_000;
    expect(t.waitMs('10.0.0.1')).toBe(0);
  });

  it('clears an address on success', () => {
    const { t } = throttle();
    t.fail('a');
    t.fail('a');
    t.succeed('a');
    t.fail('a');
    t.fail('a');
    expect(t.waitMs('a')).toBe(0);
  });

  it('counts at most maxAddresses, forgetting the oldest', () => {
    const { t } = throttle(2);
    for (const address of ['a', 'a', 'a', 'b', 'c']) t.fail(address);
    expect(t.waitMs('a')).toBe(0);
    for (let i = 0; i < 2; i++) t.fail('c');
    expect(t.waitMs('c')).toBeGreaterThan(0);
  });
});
