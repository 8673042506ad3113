import { describe, expect, it } from 'vitest';
import type { SluiceTool, ToolAnnotations, ToolPolicy, ToolSource } from '@sluice/core';
import { annotationsSayDestructive, isDestructive } from '../src/destructive.js';
import { PatternSet } from '../src/pattern.js';

const tool = (source: ToolSource, annotations?: ToolAnnotations, policy: ToolPolicy = {}): SluiceTool => ({
  name: 'pay.refund',
  definition: { name: 'pay.refund', inputSchema: { type: 'object' }, ...(annotations ? { annotations } : {}) },
  policy,
  source,
});
const local: ToolSource = { kind: 'local' };
const upstream = (trusted: boolean): ToolSource => ({
  kind: 'upstream',
  upstream: 'pay',
  originalName: 'refund',
  trusted,
});
const rules = (destructive: string[] = [], exempt: string[] = []) => ({
  destructive: new PatternSet(destructive),
  exempt: new PatternSet(exempt),
});

describe('what counts as destructive', () => {
  it("follows the specification's defaults for annotations", () => {
    expect(annotationsSayDestructive({})).toBe(true);
    expect(annotationsSayDestructive({ destructiveHint: true })).toBe(true);
    expect(annotationsSayDestructive({ destructiveHint: false })).toBe(false);
    expect(annotationsSayDestructive({ readOnlyHint: true })).toBe(false);
    expect(annotationsSayDestructive({ readOnlyHint: true, destructiveHint: true })).toBe(false);
    expect(annotationsSayDestructive({ readOnlyHint: false })).toBe(true);
  });

  it('believes annotations of local tools and trusted upstreams only', () => {
    expect(isDestructive(tool(local), rules())).toBe(true);
    expect(isDestructive(tool({ kind: 'adopted' }), rules())).toBe(true);
    expect(isDestructive(tool(upstream(true)), rules())).toBe(true);
    expect(isDestructive(tool(upstream(false)), rules())).toBe(false);
    expect(isDestructive(tool(upstream(false), { destructiveHint: true }), rules())).toBe(false);
  });

  it('lets the policy decide first, then destructive patterns, then exempt patterns', () => {
    expect(isDestructive(tool(local, {}, { destructive: false }), rules(['pay.*']))).toBe(false);
    expect(isDestructive(tool(upstream(false), { readOnlyHint: true }, { destructive: true }), rules())).toBe(true);
    expect(isDestructive(tool(upstream(false), { readOnlyHint: true }), rules(['pay.*']))).toBe(true);
    expect(isDestructive(tool(local), rules(['pay.*'], ['pay.*']))).toBe(true);
    expect(isDestructive(tool(local), rules([], ['pay.refund']))).toBe(false);
  });
});
