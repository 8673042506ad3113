import { describe, expect, it } from 'vitest';
import type { CallContext, SluiceTool, ToolSource } from '@sluice/core';
import { readRefusal } from '@sluice/core';
import { RiskErrorCode } from '@sluice/plugin-risk';
import { Gate, rereviewHold } from '../src/gate.js';

const ctxFor = (name: string, source: ToolSource) => ({ tool: { name, source } as SluiceTool }) as CallContext;
const fromA: ToolSource = { kind: 'upstream', upstream: 'a', originalName: 'x', trusted: false };
const fromB: ToolSource = { kind: 'upstream', upstream: 'b', originalName: 'x', trusted: false };

describe('the gate', () => {
  it('refuses calls to a held name only for the source whose copy is held', () => {
    const gate = new Gate();
    gate.hold('x', rereviewHold('a', 'x', 'x'));
    expect(readRefusal(gate.refuse(ctxFor('x', fromA)))?.code).toBe(RiskErrorCode.TOOL_AWAITING_REREVIEW);
    expect(gate.refuse(ctxFor('x', fromB))).toBeUndefined();
    expect(gate.refuse(ctxFor('x', { kind: 'local' }))).toBeUndefined();
    expect(gate.refuse(ctxFor('y', fromA))).toBeUndefined();
  });

  it('hides a held name from the list unless another source exposes it now', () => {
    const gate = new Gate();
    const tools = [
      { name: 'x', inputSchema: { type: 'object' as const } },
      { name: 'y', inputSchema: { type: 'object' as const } },
    ];
    expect(gate.filter(tools, () => 'a')).toBe(tools);
    gate.hold('x', rereviewHold('a', 'x', 'x'));
    expect(gate.filter(tools, () => 'a').map((t) => t.name)).toEqual(['y']);
    expect(gate.filter(tools, () => undefined).map((t) => t.name)).toEqual(['y']);
    expect(gate.filter(tools, () => 'local').map((t) => t.name)).toEqual(['x', 'y']);
  });

  it('releases only the holds of the given codes', () => {
    const gate = new Gate();
    gate.hold('x', rereviewHold('a', 'x', 'x'));
    gate.release('x', [RiskErrorCode.TOOL_REVOKED]);
    expect(gate.size).toBe(1);
    gate.release('x', [RiskErrorCode.TOOL_AWAITING_REREVIEW]);
    expect(gate.size).toBe(0);
  });
});
