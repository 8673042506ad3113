import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UNGUESSABLE_KEY_BITS, keyStrengthBits, unguessableKeys } from '../src/auth/api-keys.js';
import { GuessThrottle, sourceOf } from '../src/auth/guess-throttle.js';

describe('the guess throttle', () => {
  it('groups addresses by /24, /64 and loopback', () => {
    expect(sourceOf('127.0.0.1')).toBe(sourceOf('127.9.8.7'));
    expect(sourceOf('::1')).toBe('loopback');
    expect(sourceOf('::ffff:10.1.2.3')).toBe('10.1.2.0/24');
    expect(sourceOf('10.1.2.3')).toBe(sourceOf('10.1.2.250'));
    expect(sourceOf('10.1.2.3')).not.toBe(sourceOf('10.1.3.3'));
    expect(sourceOf('2001:db8:1:2::5')).toBe(sourceOf('2001:db8:1:2:ffff::1'));
    expect(sourceOf('2001:db8:1:2::5')).not.toBe(sourceOf('2001:db8:1:3::5'));
    expect(sourceOf(undefined)).toBe('unknown');
  });

  it('never throws and names a bounded source for any address string', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 60 }), fc.ipV4(), fc.ipV6()), (address) => {
        expect(sourceOf(address).length).toBeLessThan(80);
      }),
    );
  });

  it('reserves in-flight checks, so concurrent guesses get only the budget', () => {
    const clock = { now: 0 };
    const t = new GuessThrottle({ maxFailures: 5, windowMs: 60_000 }, () => clock.now);
    const admissions = Array.from({ length: 300 }, (_, i) => t.admit('127.0.0.1', `Bearer wrong-${i}`));
    expect(admissions.filter((a) => a.kind === 'check')).toHaveLength(5);
    for (const a of admissions) if (a.kind === 'check') a.settle(false);
    expect(t.admit('127.0.0.2', 'Bearer wrong').kind).toBe('throttled');
    clock.now = 60_000;
    expect(t.admit('127.0.0.2', 'Bearer wrong').kind).toBe('check');
  });

  it('lets a token as random as an unguessable key pass a throttled source once admitted, and no other', () => {
    const token = randomBytes(32).toString('base64url');
    const t = new GuessThrottle({ maxFailures: 2, windowMs: 60_000 });
    const first = t.admit('10.0.0.1', `Bearer ${token}`);
    if (first.kind !== 'check') throw new Error('expected a check');
    first.settle(true);
    for (let i = 0; i < 2; i++) {
      const a = t.admit('10.0.0.2', `Bearer wrong-${i}`);
      if (a.kind === 'check') a.settle(false);
    }
    expect(t.admit('10.0.0.3', 'Bearer wrong-9').kind).toBe('throttled');
    expect(t.admit('10.0.0.3', `Bearer ${token}`).kind).toBe('check');
    expect(t.admit('10.0.0.3', `Bearer ${token.slice(0, -1)}`).kind).toBe('throttled');
    expect(t.admit('10.0.1.3', 'Bearer wrong-9').kind).toBe('check');
  });

  it('refuses a guessable credential at a throttled source even after it was admitted, as it refuses a wrong one', () => {
    const t = new GuessThrottle({ maxFailures: 2, windowMs: 60_000 }, () => 1_000);
    for (let round = 0; round < 3; round++) {
      const used = t.admit('10.0.0.1', 'Bearer right');
      if (used.kind !== 'check') throw new Error('expected a check');
      used.settle(true);
    }
    for (let i = 0; i < 2; i++) {
      const a = t.admit('10.0.0.2', `Bearer wrong-${i}`);
      if (a.kind === 'check') a.settle(false);
    }
    const right = t.admit('10.0.0.3', 'Bearer right');
    const wrong = t.admit('10.0.0.3', 'Bearer wrong-9');
    expect(right).toEqual(wrong);
    expect(right.kind).toBe('throttled');
  });

  it('lets a configured key too random to guess pass a throttled source on its first use, and no guessable one', () => {
    const strong = randomBytes(32).toString('hex');
    const weak = 'weakweakweakweak';
    const t = new GuessThrottle(
      { maxFailures: 2, windowMs: 60_000 },
      Date.now,
      unguessableKeys({ keys: [{ key: strong }, { key: weak }] }),
    );
    for (let i = 0; i < 2; i++) {
      const a = t.admit('10.0.0.2', `Bearer wrong-${i}`);
      if (a.kind === 'check') a.settle(false);
    }
    expect(t.admit('10.0.0.3', `Bearer ${weak}`).kind).toBe('throttled');
    expect(t.admit('10.0.0.3', `Bearer ${strong}`).kind).toBe('check');
    expect(t.admit('10.0.0.3', `bearer ${strong}`).kind).toBe('check');
    expect(t.admit('10.0.0.3', `Bearer ${strong.slice(1)}`).kind).toBe('throttled');
    expect(t.admit('10.0.0.3', strong).kind).toBe('throttled');
  });
});

describe('the key strength estimate', () => {
  it('rates keys of 32 random bytes, in hex or base64url, as too random to guess', () => {
    for (let i = 0; i < 200; i++) {
      const bytes = randomBytes(32);
      expect(keyStrengthBits(bytes.toString('hex'))).toBeGreaterThanOrEqual(UNGUESSABLE_KEY_BITS);
      expect(keyStrengthBits(bytes.toString('base64url'))).toBeGreaterThanOrEqual(UNGUESSABLE_KEY_BITS);
    }
  });

  it('rates a short key repeated to any length, and common short keys, as guessable', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 600 }), (unit, times) => {
        expect(keyStrengthBits(unit.repeat(times))).toBeLessThan(UNGUESSABLE_KEY_BITS);
      }),
    );
    for (const key of ['password12345678', 'weakweakweakweak', 'a'.repeat(4096), randomBytes(8).toString('hex')])
      expect(keyStrengthBits(key)).toBeLessThan(UNGUESSABLE_KEY_BITS);
  });

  it('has no configured key pass the throttle unless it is one of them', () => {
    const check = unguessableKeys({ keys: [{ key: randomBytes(32).toString('hex') }] });
    expect(check).toBeDefined();
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (guess) => {
        expect(check?.(`Bearer ${guess}`)).toBe(false);
      }),
    );
    expect(unguessableKeys({ keys: [{ key: 'weakweakweakweak' }] })).toBeUndefined();
  });
});
