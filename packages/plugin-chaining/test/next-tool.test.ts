import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MetaKey } from '@sluice/core';
import type { ToolArgsOf } from '@sluice/plugin-chaining';
import { next, readDirective, typedNext, withNext } from '@sluice/plugin-chaining';

// The two tools exist for their types: typedNext() takes them as type arguments.
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- used only as a type, on purpose
const check = {
  name: 'check_account_issue' as const,
  inputSchema: z.object({ customerId: z.string() }),
  handler: () => ({ content: [] }),
};
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- used only as a type, on purpose
const handoff = {
  name: 'initiate_human_handoff' as const,
  inputSchema: z.object({ customerId: z.string(), urgency: z.enum(['low', 'high']) }),
  handler: () => ({ content: [] }),
};
type BankTools = ToolArgsOf<[typeof check, typeof handoff]>;

describe('naming the next tool from a handler', () => {
  it('next() is a _meta fragment the plugin reads', () => {
    const result = { content: [], ...next('b', { x: 1 }) };
    expect(result._meta).toEqual({ [MetaKey.NEXT_TOOL]: { tool: 'b', arguments: { x: 1 } } });
    expect(readDirective(result)).toMatchObject({ kind: 'valid', next: { tool: 'b', arguments: { x: 1 } } });
  });

  it('withNext() keeps the rest of the result and its _meta', () => {
    const result = withNext({ content: [{ type: 'text', text: 'hi' }], isError: true, _meta: { keep: 1 } }, 'b');
    expect(result).toEqual({
      content: [{ type: 'text', text: 'hi' }],
      isError: true,
      _meta: { keep: 1, [MetaKey.NEXT_TOOL]: { tool: 'b', arguments: {} } },
    });
  });

  it('typedNext() accepts only the tools and arguments it was given', () => {
    const bank = typedNext<BankTools>();
    const result = withNext({ content: [] }, 'x');
    expect(bank.withNext(result, 'initiate_human_handoff', { customerId: '1', urgency: 'high' })._meta).toMatchObject({
      [MetaKey.NEXT_TOOL]: { tool: 'initiate_human_handoff' },
    });
    // These lines are checked by the package typecheck (tsc includes test/).
    // @ts-expect-error: not a registered tool
    bank.next('transfer_funds', {});
    // @ts-expect-error: urgency must be low or high
    bank.next('initiate_human_handoff', { customerId: '1', urgency: 'now' });
    // @ts-expect-error: customerId is missing
    bank.next('check_account_issue', {});
    const named = typedNext<'a' | 'b'>();
    expect(named.next('a', { anything: true })._meta[MetaKey.NEXT_TOOL].tool).toBe('a');
    // @ts-expect-error: only a or b
    named.next('c', {});
  });
});
