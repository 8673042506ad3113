import { describe, expect, it } from 'vitest';
import { ToolFloor, assessTool } from '@sluice/plugin-risk';
import { hasIrreversibleVerb } from '../src/scoring/tool-risk.js';
import type { ToolShape } from '@sluice/plugin-risk';

const described = 'Returns the forecast for a city over the next days.';
const schema = { type: 'object', properties: { city: { type: 'string', description: 'City name' } } };
const untrusted = { axes: { trust: 2 } };
const trusted = { axes: { trust: 0 } };

function tool(overrides: Partial<ToolShape> = {}): ToolShape {
  return {
    name: 'forecast',
    description: described,
    inputSchema: schema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    ...overrides,
  };
}

describe('the base-action axis', () => {
  it.each([
    ['read-only, closed world', { readOnlyHint: true, openWorldHint: false }, 0],
    ['read-only, open world by default', { readOnlyHint: true }, 1],
    ['nothing said: the spec defaults (writes, destructive, open world)', undefined, 4],
    ['writes, not destructive, closed world', { readOnlyHint: false, destructiveHint: false, openWorldHint: false }, 1],
    ['writes, destructive by default, closed world', { readOnlyHint: false, openWorldHint: false }, 3],
    [
      'writes, destructive, idempotent, closed world',
      { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      2,
    ],
    [
      'writes idempotently, not destructive, closed world (floored at 0)',
      { destructiveHint: false, idempotentHint: true, openWorldHint: false },
      0,
    ],
    [
      'read-only ignores destructive and idempotent',
      { readOnlyHint: true, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      0,
    ],
  ] as const)('scores %s', (_what, annotations, score) => {
    const result = assessTool(tool(annotations === undefined ? { annotations: undefined } : { annotations }), trusted);
    expect(result.axes.action).toBe(score);
  });

  it('adds 1 for remote writes, 2 for remote administration and 1 for sending user data', () => {
    expect(assessTool(tool(), trusted, { sideEffect: 'remote-write' }).axes.action).toBe(1);
    expect(assessTool(tool(), trusted, { sideEffect: 'remote-admin' }).axes.action).toBe(2);
    expect(assessTool(tool(), trusted, { sideEffect: 'remote-admin', sendsUserData: true }).axes.action).toBe(3);
    expect(assessTool(tool(), trusted, { sideEffect: 'none' }).axes.action).toBe(0);
  });

  it('ignores hints that are not booleans', () => {
    const result = assessTool(tool({ annotations: { readOnlyHint: 'yes', openWorldHint: 0 } }), trusted);
    expect(result.axes.action).toBe(4);
  });
});

describe('the documentation penalty', () => {
  it.each([
    ['a missing description', { description: undefined }, ['description']],
    ['a short description', { description: 'Gets data' }, ['description']],
    ['a boilerplate description', { description: 'No description.' }, ['description']],
    [
      'a description that only repeats the name',
      { name: 'get_current_forecast_for_city', description: 'Get current forecast for city' },
      ['description'],
    ],
    ['an absent input schema', { inputSchema: undefined }, ['input-schema']],
    [
      'fewer than half the properties described',
      { inputSchema: { type: 'object', properties: { a: {}, b: {}, c: { description: 'C' } } } },
      ['property-docs'],
    ],
    ['unspecified annotations', { annotations: { title: 'Forecast' } }, ['annotations']],
  ] as const)('counts %s as one gap', (_what, overrides, gaps) => {
    const result = assessTool(tool(overrides), untrusted);
    expect(result.docGaps).toEqual(gaps);
    expect(result.axes.doc).toBe(1);
  });

  it('accepts half the properties described, and a schema with no properties', () => {
    expect(
      assessTool(tool({ inputSchema: { type: 'object', properties: { a: {}, b: { description: 'B' } } } }), untrusted)
        .docGaps,
    ).toEqual([]);
    expect(assessTool(tool({ inputSchema: { type: 'object' } }), untrusted).docGaps).toEqual([]);
  });

  it('counts under-described output properties as a gap of their own', () => {
    const result = assessTool(tool({ outputSchema: { type: 'object', properties: { a: {}, b: {} } } }), untrusted);
    expect(result.docGaps).toEqual(['output-property-docs']);
  });

  it('caps the penalty at 3 when four gaps are present', () => {
    const undescribed = { type: 'object', properties: { a: {}, b: {} } };
    const result = assessTool(
      { name: 'x', description: 'TODO', inputSchema: undescribed, outputSchema: undescribed },
      untrusted,
    );
    expect(result.docGaps).toEqual(['description', 'property-docs', 'output-property-docs', 'annotations']);
    expect(result.axes.doc).toBe(3);
  });

  it('waives the penalty for a server that carries a trust signal, and still scores the action', () => {
    const bare: ToolShape = { name: 'run_query', inputSchema: { type: 'object', properties: { q: {} } } };
    const waived = assessTool(bare, { axes: { trust: 1 } });
    expect(waived.docWaived).toBe(true);
    expect(waived.axes.doc).toBe(0);
    expect(waived.docGaps).toEqual(['description', 'property-docs', 'annotations']);
    expect(waived.axes.action).toBe(4);
    const unwaived = assessTool(bare, untrusted);
    expect(unwaived.docWaived).toBe(false);
    expect(unwaived.axes.doc).toBe(3);
  });

  it('keeps the floors under the waiver', () => {
    expect(assessTool(tool({ name: 'delete_forecast' }), trusted).floors).toEqual([ToolFloor.IRREVERSIBLE_VERB]);
  });
});

describe('tool levels and floors', () => {
  it('buckets base action plus penalty as the server does', () => {
    expect(assessTool(tool(), untrusted).level).toBe('L1');
    expect(assessTool(tool({ annotations: { readOnlyHint: true } }), untrusted).level).toBe('L2');
    expect(assessTool(tool({ annotations: { readOnlyHint: true }, description: 'Short' }), untrusted).level).toBe('L3');
    expect(
      assessTool(tool({ annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true } }), untrusted)
        .level,
    ).toBe('L3');
    expect(assessTool(tool({ annotations: { readOnlyHint: false, openWorldHint: false } }), untrusted).level).toBe(
      'L4',
    );
    expect(assessTool(tool({ annotations: undefined }), trusted).level).toBe('L5');
  });

  it.each([
    'delete_file',
    'drop_table',
    'purge_cache',
    'wipe_disk',
    'remove_label',
    'force_push',
    'deleteRepository',
    'repo-drop',
    'Remove.Member',
  ])('sends %s to L5: an irreversible verb in the name', (name) => {
    expect(hasIrreversibleVerb(name)).toBe(true);
    const result = assessTool(tool({ name }), trusted);
    expect(result.floors).toContain(ToolFloor.IRREVERSIBLE_VERB);
    expect(result.level).toBe('L5');
  });

  it.each(['undelete_file', 'dropdown_options', 'list_removals', 'push_force_report'])(
    'does not read %s as irreversible',
    (name) => {
      expect(hasIrreversibleVerb(name)).toBe(false);
    },
  );

  it('sends a tool declared destructive and not idempotent to L5', () => {
    const result = assessTool(
      tool({ annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false } }),
      trusted,
    );
    expect(result.axes.action).toBe(3);
    expect(result.floors).toEqual([ToolFloor.DESTRUCTIVE_NOT_IDEMPOTENT]);
    expect(result.level).toBe('L5');
  });

  it('distrusts a tool claiming to be both read-only and destructive: the destructive floor trips', () => {
    const result = assessTool(
      tool({ annotations: { readOnlyHint: true, destructiveHint: true, openWorldHint: false } }),
      trusted,
    );
    expect(result.floors).toEqual([ToolFloor.DESTRUCTIVE_NOT_IDEMPOTENT]);
    expect(result.level).toBe('L5');
  });

  it('does not floor a destructive tool that declares itself idempotent', () => {
    const result = assessTool(
      tool({ annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false } }),
      trusted,
    );
    expect(result.floors).toEqual([]);
    expect(result.level).toBe('L3');
  });

  it('floors a tool with neither description nor annotations at L4 at least', () => {
    for (const annotations of [undefined, {}, { title: 'Only a title' }]) {
      const result = assessTool({ name: 'mystery', inputSchema: { type: 'object' }, annotations }, trusted);
      expect(result.floors).toEqual([ToolFloor.UNDOCUMENTED]);
      expect(['L4', 'L5']).toContain(result.level);
    }
    expect(
      assessTool({ name: 'mystery', description: 'Something', inputSchema: { type: 'object' } }, trusted).floors,
    ).toEqual([]);
  });
});
