import { describe, expect, it } from 'vitest';
import type { SluiceTool, ToolAnnotations, ToolPolicy, ToolSource } from '@sluice/core';
import { selectTools } from '@sluice/core';
import { annotationsMarkDestructive, annotationsSayDestructive, isDestructive } from '../src/destructive.js';
import type { DestructiveRules } from '../src/destructive.js';

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
const rules = (
  destructive: string[] = [],
  exempt: string[] = [],
  annotations: DestructiveRules['annotations'] = 'spec-defaults',
): DestructiveRules => ({
  destructive: selectTools(destructive),
  exempt: selectTools(exempt),
  annotations,
});
const marked = (destructive: string[] = [], exempt: string[] = []) => rules(destructive, exempt, 'explicit');

describe('what counts as destructive', () => {
  it("follows the specification's defaults for annotations", () => {
    expect(annotationsSayDestructive({})).toBe(true);
    expect(annotationsSayDestructive({ destructiveHint: true })).toBe(true);
    expect(annotationsSayDestructive({ destructiveHint: false })).toBe(false);
    expect(annotationsSayDestructive({ readOnlyHint: true })).toBe(false);
    expect(annotationsSayDestructive({ readOnlyHint: true, destructiveHint: true })).toBe(false);
    expect(annotationsSayDestructive({ readOnlyHint: false })).toBe(true);
  });

  it('reads only destructiveHint: true, without readOnlyHint: true, as an explicit mark', () => {
    expect(annotationsMarkDestructive({})).toBe(false);
    expect(annotationsMarkDestructive({ destructiveHint: true })).toBe(true);
    expect(annotationsMarkDestructive({ destructiveHint: false })).toBe(false);
    expect(annotationsMarkDestructive({ readOnlyHint: false })).toBe(false);
    expect(annotationsMarkDestructive({ readOnlyHint: true, destructiveHint: true })).toBe(false);
  });

  it('by default takes only explicit marks: policy, selector, or a trusted destructiveHint: true', () => {
    expect(isDestructive(tool(local), marked())).toBe(false);
    expect(isDestructive(tool({ kind: 'adopted' }), marked())).toBe(false);
    expect(isDestructive(tool(upstream(true)), marked())).toBe(false);
    expect(isDestructive(tool(local, { destructiveHint: true }), marked())).toBe(true);
    expect(isDestructive(tool(upstream(true), { destructiveHint: true }), marked())).toBe(true);
    expect(isDestructive(tool(upstream(false), { destructiveHint: true }), marked())).toBe(false);
    expect(isDestructive(tool(local, {}, { destructive: true }), marked())).toBe(true);
    expect(isDestructive(tool(upstream(false)), marked(['pay.*']))).toBe(true);
    expect(isDestructive(tool(upstream(false)), marked(['pay/refund']))).toBe(true);
    expect(isDestructive(tool(local, { destructiveHint: true }), marked([], ['pay.refund']))).toBe(false);
  });

  it('with spec-defaults, believes annotations of local tools and trusted upstreams only', () => {
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
