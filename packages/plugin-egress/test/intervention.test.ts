import { describe, expect, it } from 'vitest';
import { MetaKey } from '@sluice/core';
import { errorOf, textOf } from '@sluice/testing';
import { EgressErrorCode } from '../src/errors.js';
import { formatBytes, interventionText, payloadTooLarge } from '../src/intervention.js';
import { resultSize } from '../src/measure.js';

describe('the intervention message', () => {
  it('states the limit the way the seed does: binary units, one decimal', () => {
    expect(formatBytes(2 * 1024 * 1024)).toBe('2.0MB');
    expect(formatBytes(1_024)).toBe('1.0KB');
    expect(formatBytes(1_536)).toBe('1.5KB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0GB');
    expect(interventionText(2 * 1024 * 1024)).toBe(
      '[SYSTEM INTERVENTION: Payload truncated at 2.0MB to prevent memory crash. ' +
        'You MUST use pagination (limit/offset) or filters to retrieve smaller result sets.]',
    );
  });

  it('refuses an unsplittable structured result with PAYLOAD_TOO_LARGE, small enough for the smallest limit', () => {
    const longestName = 'n'.repeat(128);
    const result = payloadTooLarge(longestName, {
      originalBytes: Number.MAX_SAFE_INTEGER,
      keptBytes: 0,
      limitBytes: 1_024,
    });
    expect(result.isError).toBe(true);
    expect(errorOf(result)?.code).toBe(EgressErrorCode.PAYLOAD_TOO_LARGE);
    expect(textOf(result)).toContain('cannot be cut without breaking its output schema');
    expect(result._meta?.[MetaKey.EGRESS]).toEqual({
      originalBytes: Number.MAX_SAFE_INTEGER,
      keptBytes: 0,
      limitBytes: 1_024,
    });
    expect(resultSize(result)).toBeLessThanOrEqual(1_024);
  });
});
