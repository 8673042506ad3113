import { describe, expect, it } from 'vitest';
import { readRefusal, refusal } from '@sluice/core';
import { toolErrorText } from '@sluice/core/internal';

describe('refusal()', () => {
  it('renders the <tool_error> block with code, message and suggestion, and a machine-readable copy', () => {
    const result = refusal({
      code: 'SERVER_BUSY',
      message: 'Busy (5 active).',
      suggestion: 'Retry later.',
      retryAfterMs: 250,
      details: { active: 5 },
    });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: '<tool_error>\n  <error_code>SERVER_BUSY</error_code>\n  <message>Busy (5 active).</message>\n  <suggestion>Retry later.</suggestion>\n</tool_error>',
      },
    ]);
    expect(readRefusal(result)).toEqual({
      code: 'SERVER_BUSY',
      message: 'Busy (5 active).',
      retryAfterMs: 250,
      active: 5,
    });
  });

  it('escapes what could close or open an element, and keeps arrows readable', () => {
    expect(toolErrorText('X', 'a -> b & <script>')).toContain('<message>a -> b &amp; &lt;script></message>');
  });

  it('does not let details overwrite the code or the message', () => {
    const result = refusal({ code: 'REAL', message: 'real', details: { code: 'FAKE', message: 'fake' } });
    expect(readRefusal(result)).toMatchObject({ code: 'REAL', message: 'real' });
  });

  it('reads nothing from a result that is not a refusal', () => {
    expect(readRefusal({ content: [] })).toBeUndefined();
    expect(readRefusal({ content: [], _meta: { 'dev.sluice/error': { code: 7 } } })).toBeUndefined();
  });
});
