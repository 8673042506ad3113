import fc from 'fast-check';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { schemaToTs } from '@sluice/plugin-code-mode';

/** Whether `type` parses as a TypeScript type without syntax errors. */
function parses(type: string): boolean {
  const source = ts.createSourceFile('t.ts', `type T = ${type};`, ts.ScriptTarget.ES2022);
  return (source as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length === 0;
}

describe('schemaToTs', () => {
  it.each([
    [{ type: 'string' }, 'string'],
    [{ type: 'integer' }, 'number'],
    [{ type: ['string', 'null'] }, 'string | null'],
    [{ enum: ['a', 'b'] }, '"a" | "b"'],
    [{ const: 3 }, '3'],
    [{ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } }, '(string | number)[]'],
    [
      { type: 'object', properties: { id: { type: 'string' }, 'x-y': { type: 'boolean' } }, required: ['id'] },
      '{ id: string; "x-y"?: boolean }',
    ],
    [{ type: 'object' }, 'Record<string, unknown>'],
    [{ type: 'object', properties: {}, additionalProperties: false }, '{}'],
    [{ type: 'object', additionalProperties: { type: 'number' } }, '{ [key: string]: number }'],
    [
      { allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object' }] },
      '{ a?: string } & Record<string, unknown>',
    ],
    [{ type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] }, '[string, number]'],
    [{ $ref: '#/$defs/x' }, 'unknown'],
    [true, 'unknown'],
    [false, 'never'],
  ])('renders %j as %s', (schema, expected) => {
    expect(schemaToTs(schema)).toBe(expected);
  });

  it('stops at a bounded depth on deeply nested schemas', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 1_000; i++) schema = { type: 'array', items: schema };
    const type = schemaToTs(schema);
    expect(type).toMatch(/^unknown(\[\])+$/);
    expect(type.length).toBeLessThan(100);
  });

  it('renders any JSON value as a type that parses, in bounded length, without throwing', () => {
    const schema = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        fc.record(
          {
            type: fc.constantFrom('string', 'number', 'object', 'array', 'boolean', 'null', 'bogus'),
            properties: fc.dictionary(fc.string(), tie('node')),
            required: fc.array(fc.string()),
            items: tie('node'),
            enum: fc.array(fc.jsonValue()),
            anyOf: fc.array(tie('node'), { maxLength: 3 }),
            additionalProperties: tie('node'),
          },
          { requiredKeys: [] },
        ),
      ),
    })).node;
    fc.assert(
      fc.property(schema, (s) => {
        const type = schemaToTs(s);
        expect(type.length).toBeLessThanOrEqual(4_000);
        expect(parses(type), type).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
