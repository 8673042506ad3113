import { describe, expect, it } from 'vitest';
import type { CallContext, SluiceTool, ToolSource } from '@sluice/core';
import { readRefusal } from '@sluice/core';
import { RiskErrorCode } from '@sluice/plugin-risk';
import { CallHolds, notExposedHold, rereviewHold } from '../src/ledger/holds.js';

const ctxFor = (name: string, source: ToolSource) => ({ tool: { name, source } as SluiceTool }) as CallContext;
const fromA: ToolSource = { kind: 'upstream', upstream: 'a', originalName: 'x', trusted: false };
const fromB: ToolSource = { kind: 'upstream', upstream: 'b', originalName: 'x', trusted: false };

describe('the call holds', () => {
  it('refuses a call to a copy kept out on a later import with TOOL_NOT_EXPOSED, naming the reason', () => {
    const holds = new CallHolds();
    holds.hold('x', notExposedHold('a', 'x', 'x', 'ABOVE_MAX_RISK: L5 is above maxRisk L3'));
    const refusal = readRefusal(holds.refuse(ctxFor('x', fromA)));
    expect(refusal?.code).toBe(RiskErrorCode.TOOL_NOT_EXPOSED);
    expect(refusal?.message).toBe('The tool "x" is no longer exposed: ABOVE_MAX_RISK: L5 is above maxRisk L3');
    expect(holds.refuse(ctxFor('x', fromB))).toBeUndefined();
  });

  it('refuses calls to a held name only for the source whose copy is held', () => {
    const holds = new CallHolds();
    holds.hold('x', rereviewHold('a', 'x', 'x'));
    expect(readRefusal(holds.refuse(ctxFor('x', fromA)))?.code).toBe(RiskErrorCode.TOOL_AWAITING_REREVIEW);
    expect(holds.refuse(ctxFor('x', fromB))).toBeUndefined();
    expect(holds.refuse(ctxFor('x', { kind: 'local' }))).toBeUndefined();
    expect(holds.refuse(ctxFor('y', fromA))).toBeUndefined();
  });

  it('hides a held name from the list unless another source exposes it now', () => {
    const holds = new CallHolds();
    const tools = [
      { name: 'x', inputSchema: { type: 'object' as const } },
      { name: 'y', inputSchema: { type: 'object' as const } },
    ];
    expect(holds.filter(tools, () => 'a')).toBe(tools);
    holds.hold('x', rereviewHold('a', 'x', 'x'));
    expect(holds.filter(tools, () => 'a').map((t) => t.name)).toEqual(['y']);
    expect(holds.filter(tools, () => undefined).map((t) => t.name)).toEqual(['y']);
    expect(holds.filter(tools, () => 'local').map((t) => t.name)).toEqual(['x', 'y']);
  });

  it('releases only the holds of the given codes', () => {
    const holds = new CallHolds();
    holds.hold('x', rereviewHold('a', 'x', 'x'));
    holds.release('x', [RiskErrorCode.TOOL_REVOKED]);
    expect(holds.size).toBe(1);
    holds.release('x', [RiskErrorCode.TOOL_AWAITING_REREVIEW]);
    expect(holds.size).toBe(0);
  });
});
