import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeJsonSchemaValidator } from '@sluice/core';

const check = (schema: Record<string, unknown>, value: unknown) =>
  safeJsonSchemaValidator().getValidator(schema)(value);

describe('JSON Schema validation with linear-time patterns', () => {
  it('answers a catastrophic pattern on a long string at once, and correctly', () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a|aa)+$' } } };
    // A backtracking engine needs on the order of 2^n steps here.
    expect(check(schema, { s: `${'a'.repeat(5_000)}b` }).valid).toBe(false);
    expect(check(schema, { s: 'a'.repeat(5_000) }).valid).toBe(true);
  });

  it('applies patternProperties through the same engine', () => {
    const schema = { type: 'object', patternProperties: { '^(x|xx)+$': { type: 'number' } } };
    expect(check(schema, { ['x'.repeat(60)]: 'not a number' }).valid).toBe(false);
    expect(check(schema, { [`${'x'.repeat(60)}y`]: 'not matched, so anything' }).valid).toBe(true);
  });

  it('fails closed on a pattern the engine cannot run (lookaround, backreferences)', () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(?=a)a$' } } };
    const result = check(schema, { s: 'a' });
    expect(result.valid).toBe(false);
    expect(result.errorMessage).toMatch(/pattern/);
  });

  it('agrees with JavaScript RegExp on the patterns both engines accept (fuzzed)', () => {
    const patterns = ['^[a-z]+$', 'ab+c', '^\\d{2,4}-\\w+$', '(foo|bar)baz', '^[^\\s]*$', 'x.y'];
    fc.assert(
      fc.property(fc.constantFrom(...patterns), fc.string({ maxLength: 20 }), (pattern, text) => {
        const schema = { type: 'object', properties: { s: { type: 'string', pattern } } };
        expect(check(schema, { s: text }).valid).toBe(new RegExp(pattern, 'u').test(text));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the dialect a schema declares, and 2020-12 when it declares none', () => {
    const tuple = { type: 'object', properties: { t: { type: 'array', prefixItems: [{ type: 'string' }] } } };
    expect(check(tuple, { t: [1] }).valid).toBe(false);
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: ['a'] };
    expect(check(draft7, {}).valid).toBe(false);
  });
});
