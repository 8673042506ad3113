import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RiskOptions } from '@sluice/plugin-risk';
import { RequestStateCodec, argumentsDigest } from '../src/approval/request-state.js';
import type { StateBinding } from '../src/approval/request-state.js';

const codec = new RequestStateCodec(randomBytes(32));
const binding: StateBinding = {
  principal: 'p',
  tool: 'deploy',
  server: 'local',
  args: argumentsDigest({ env: 'prod' }),
  fingerprint: 'f'.repeat(64),
};
const NOW = 1_800_000_000_000;

describe('the approval state', () => {
  it('opens what it sealed, for the same binding, before it expires', () => {
    const { state, nonce } = codec.mint(binding, NOW + 1_000);
    expect(codec.check(state, binding, NOW)).toEqual({ ok: true, nonce, expiresAt: NOW + 1_000 });
  });

  it('gives every state its own nonce', () => {
    const nonces = new Set(Array.from({ length: 100 }, () => codec.mint(binding, NOW).nonce));
    expect(nonces.size).toBe(100);
  });

  it('refuses it at and after its expiry', () => {
    const { state } = codec.mint(binding, NOW);
    expect(codec.check(state, binding, NOW)).toEqual({ ok: false, why: 'expired' });
  });

  it.each(['principal', 'tool', 'server', 'args', 'fingerprint'] as const)('refuses it for another %s', (field) => {
    const { state } = codec.mint(binding, NOW + 1_000);
    expect(
      codec.check(state, { ...binding, [field]: field === 'args' ? argumentsDigest({ env: 'dev' }) : 'other' }, NOW),
    ).toEqual({ ok: false, why: 'other-call' });
  });

  it('refuses the same MAC written another way (Node decodes base64url leniently)', () => {
    const { state } = codec.mint(binding, NOW + 1_000);
    const last = state.at(-1) as string;
    const mac = state.split('.')[2] as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // The last of 43 characters carries 4 bits of the MAC and 2 spare ones: three other characters decode to the same bytes.
    const sameBytes = Array.from(alphabet).filter(
      (c) => c !== last && Buffer.from(mac.slice(0, -1) + c, 'base64url').equals(Buffer.from(mac, 'base64url')),
    );
    expect(sameBytes).toHaveLength(3);
    for (const c of sameBytes)
      expect(codec.check(state.slice(0, -1) + c, binding, NOW)).toEqual({ ok: false, why: 'malformed' });
    expect(codec.check(`${state.slice(0, -10)}!${state.slice(-10)}`, binding, NOW).ok).toBe(false);
  });

  it('refuses a state sealed with another key as forged', () => {
    const { state } = new RequestStateCodec(randomBytes(32)).mint(binding, NOW + 1_000);
    expect(codec.check(state, binding, NOW)).toEqual({ ok: false, why: 'forged' });
  });

  it('digests arguments whatever their key order, and tells different arguments apart', () => {
    expect(argumentsDigest({ a: 1, b: { c: [1, 2], d: 'x' } })).toBe(
      argumentsDigest({ b: { d: 'x', c: [1, 2] }, a: 1 }),
    );
    expect(argumentsDigest({ a: [1, 2] })).not.toBe(argumentsDigest({ a: [2, 1] }));
    expect(argumentsDigest({ text: '\ud800' })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('never opens a state with any character changed, removed or added (fuzzed)', () => {
    const { state } = codec.mint(binding, NOW + 1_000);
    fc.assert(
      fc.property(
        fc.nat({ max: state.length - 1 }),
        fc.string({ minLength: 1, maxLength: 3 }),
        fc.constantFrom('replace', 'delete', 'insert'),
        (at, text, how) => {
          const mutated =
            how === 'delete'
              ? state.slice(0, at) + state.slice(at + 1)
              : how === 'insert'
                ? state.slice(0, at) + text + state.slice(at)
                : state.slice(0, at) + text + state.slice(at + 1);
          fc.pre(mutated !== state);
          expect(codec.check(mutated, binding, NOW).ok).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('answers anything a client may send, never throwing (fuzzed)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.anything()), (state) => {
        expect(codec.check(state, binding, NOW).ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('requires approval.secret to hold at least 32 bytes, without echoing it', () => {
    const attempt = () => RiskOptions.parse({ approval: { secret: 'short-and-secret' } });
    expect(attempt).toThrow(/at least 32 bytes/);
    expect(() => attempt()).not.toThrow(/short-and-secret/);
    expect(RiskOptions.parse({ approval: { secret: 'é'.repeat(16) } }).approval.secret).toBe('é'.repeat(16));
  });
});
