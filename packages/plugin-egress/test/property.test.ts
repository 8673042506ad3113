import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { CallToolResult } from '@sluice/core';
import { MetaKey, createServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { egress, interventionText } from '@sluice/plugin-egress';
import { isValidUtf8Text, oracleSize, payloadsOf } from './oracle.js';
import { arbitraryResult } from './results.js';

const wellFormed = (text: string): string => (text as unknown as { toWellFormed(): string }).toWellFormed();

describe('for any result, through the pipeline', () => {
  it('returns it untouched within the limit, else valid UTF-8 within the limit that prefixes the input', async () => {
    const server = createServer({
      name: 'p',
      version: '1',
      logger: captureLogger().logger,
      plugins: [egress({ tools: { 'limited_*': { maxPayloadBytes: 1_024 } } })],
    });
    let next: CallToolResult = { content: [] };
    const limits = [1_024, 1_500, 2_048, 4_096];
    for (const limit of limits)
      server.tool({ name: `limited_${limit}`, policy: { egress: { maxPayloadBytes: limit } }, handler: () => next });
    await server.ready();
    let cut = 0;
    await fc.assert(
      fc.asyncProperty(arbitraryResult(), fc.constantFrom(...limits), async (input, limit) => {
        next = input;
        const output = await server.call(`limited_${limit}`);
        if (oracleSize(input) <= limit) {
          expect(output).toBe(input);
          return;
        }
        cut++;
        expect(oracleSize(output)).toBeLessThanOrEqual(limit);
        for (const payload of payloadsOf(output)) expect(isValidUtf8Text(payload)).toBe(true);
        const kept = output.content.slice(0, -1);
        expect(output.content.at(-1)).toEqual({ type: 'text', text: interventionText(limit) });
        kept.forEach((block, i) => {
          const original = input.content[i]!;
          const [keptPayload] = payloadsOf({ content: [block] });
          const [originalPayload] = payloadsOf({ content: [original] });
          if (originalPayload === undefined) expect(block).toEqual(original);
          else expect(wellFormed(originalPayload).startsWith(keptPayload!)).toBe(true);
        });
        const { [MetaKey.EGRESS]: record, ...restMeta } = output._meta ?? {};
        expect(record).toMatchObject({ limitBytes: limit });
        // keptBytes is the output without the intervention and the record.
        const keptOnly = { ...output, content: kept, ...(Object.keys(restMeta).length > 0 ? { _meta: restMeta } : {}) };
        if (Object.keys(restMeta).length === 0) delete keptOnly._meta;
        expect((record as { keptBytes: number }).keptBytes).toBe(oracleSize(keptOnly));
      }),
      { numRuns: 300 },
    );
    expect(cut).toBeGreaterThan(30); // the property saw plenty of results over the limit
    await server.close();
  });
});
