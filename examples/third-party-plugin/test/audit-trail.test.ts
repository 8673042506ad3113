// #region test
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CoreErrorCode, definePlugin, refusal } from '@sluice/core';
import { createTestKit, errorOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { auditTrail } from '../src/index.js';
import type { AuditRecord } from '../src/index.js';

const echo = {
  name: 'echo',
  inputSchema: z.object({ text: z.string() }),
  handler: ({ text }: { text: string }) => ({ content: [{ type: 'text' as const, text }] }),
};

function records(file: string): AuditRecord[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as AuditRecord);
}

describe('audit trail', () => {
  let kit: TestKit | undefined;
  afterEach(async () => kit?.close());

  it('writes one line per call with its outcome', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'audit-')), 'calls.jsonl');
    kit = await createTestKit({ plugins: [auditTrail({ file })], tools: [echo] });
    await kit.call('echo', { text: 'hello' });
    await kit.call('echo', { text: 42 });
    expect(records(file).map((r) => [r.tool, r.status, r.code])).toEqual([
      ['echo', 'ok', undefined],
      ['echo', 'refused', CoreErrorCode.INVALID_ARGUMENTS],
    ]);
  });
});
// #endregion test

describe('audit trail, further', () => {
  let kit: TestKit | undefined;
  afterEach(async () => kit?.close());

  it('records refusals by other plugins with their codes, and arguments only when asked', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'audit-')), 'calls.jsonl');
    const gate = definePlugin({
      name: 'gate',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.preCall.tap('gate', (ctx) =>
          ctx.arguments.text === 'no' ? refusal({ code: 'GATED', message: 'no' }) : undefined,
        ),
    });
    kit = await createTestKit({ plugins: [gate, auditTrail({ file, includeArguments: true })], tools: [echo] });
    await kit.call('echo', { text: 'no' });
    expect(records(file)).toMatchObject([
      { tool: 'echo', status: 'refused', code: 'GATED', arguments: { text: 'no' } },
    ]);
  });

  it('skips tools whose policy opts out', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'audit-')), 'calls.jsonl');
    kit = await createTestKit({
      plugins: [auditTrail({ file })],
      tools: [echo, { ...echo, name: 'quiet', policy: { audit: { skip: true } } }],
    });
    await kit.call('quiet', { text: 'x' });
    await kit.call('echo', { text: 'y' });
    expect(records(file).map((r) => r.tool)).toEqual(['echo']);
  });

  it('refuses calls with AUDIT_UNAVAILABLE while the file cannot be written, and recovers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    const file = join(dir, 'calls.jsonl');
    mkdirSync(file); // a folder where the file should be: no one can append to it, not even root
    kit = await createTestKit({ plugins: [auditTrail({ file })], tools: [echo], fakeClock: true });
    const refused = await kit.call('echo', { text: 'x' });
    expect(errorOf(refused)).toMatchObject({ code: 'AUDIT_UNAVAILABLE', retryAfterMs: 60_000 });
    rmdirSync(file);
    kit.clock!.advance(1_000);
    expect((await kit.call('echo', { text: 'y' })).isError).toBeFalsy();
    expect(records(file).map((r) => r.status)).toEqual(['ok']);
  });

  it('rejects bad options when the plugin is built', () => {
    expect(() => auditTrail({ file: '' })).toThrow(/file/);
  });
});
