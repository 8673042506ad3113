import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approvalForm, approvalMessage, showArguments, summarize } from '../src/approval/form.js';

const noMask = (text: string) => text;
const HIDING = /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

describe('the approval form', () => {
  it('asks one yes/no question, defaulting to no', () => {
    expect(approvalForm('Run it?')).toEqual({
      mode: 'form',
      message: 'Run it?',
      requestedSchema: {
        type: 'object',
        properties: {
          approve: {
            type: 'boolean',
            title: 'Approve this call',
            description: 'Yes runs the tool with these arguments; no refuses it.',
            default: false,
          },
        },
        required: ['approve'],
      },
    });
  });

  it('names the tool, its upstream and its level', () => {
    expect(
      approvalMessage({ tool: 'transfer', upstream: 'payments', level: 'L4', args: { cents: 5 } }, 400, noMask),
    ).toBe('Allow the tool "transfer" from upstream "payments" to run? Risk L4 (High). Arguments: {"cents":5}');
  });

  it('shows any arguments within the cap, masked, with nothing hidden or reordered (fuzzed)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.integer({ min: 16, max: 500 }), (args, max) => {
        const text = summarize(args, max, (t) => t.split('secret').join('[redacted]'));
        expect(text.length).toBeLessThanOrEqual(max + 40);
        expect(text).not.toMatch(HIDING);
        expect(text).not.toContain('secret');
      }),
      { numRuns: 300 },
    );
  });

  it('shows arguments that are not JSON without failing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(summarize(cyclic, 100, noMask)).toBe('(arguments that cannot be shown)');
    expect(summarize({ big: 10n }, 100, noMask)).toBe('(arguments that cannot be shown)');
  });
});

describe('arguments longer than the form shows', () => {
  const subject = (args: Record<string, unknown>) => ({ tool: 'transfer', level: 'L4' as const, args });

  it('shows a field that comes after a long one, each long value shortened on its own', () => {
    const message = approvalMessage(
      subject({ memo: 'x'.repeat(5_000), to: 'account-of-the-attacker', amount: { cents: 999_999 } }),
      400,
      noMask,
    );
    expect(message).toBeDefined();
    expect(message).toContain('to: "account-of-the-attacker"');
    expect(message).toContain('amount.cents: 999999');
    expect(message).toContain('memo: "xxx');
    expect(message!.length).toBeLessThan(400 + 120);
  });

  it('refuses to build a form when the fields cannot all be shown', () => {
    const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`field${i}`, `value number ${i}`]));
    expect(approvalMessage(subject(many), 400, noMask)).toBeUndefined();
    expect(showArguments(many, 400, noMask)).toBeUndefined();
  });

  it('names every leaf of any arguments, or none at all (fuzzed)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.oneof(fc.string({ maxLength: 600 }), fc.integer())),
        (args) => {
          const text = showArguments(args, 400, noMask);
          if (text === undefined) return;
          expect(text.length).toBeLessThanOrEqual(400 + 40);
          const whole = JSON.stringify(args);
          if (whole.length > 400) for (const key of Object.keys(args)) expect(text).toContain(`${key}: `);
        },
      ),
      { numRuns: 200 },
    );
  });
});
