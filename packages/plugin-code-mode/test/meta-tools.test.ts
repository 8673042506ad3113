import { afterEach, describe, expect, it } from 'vitest';
import { createTestKit, textOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { CodeModeErrorCode, codeMode } from '@sluice/plugin-code-mode';
import { ping, stoppedWith } from './helpers.js';

let kit: TestKit | undefined;
afterEach(async () => kit?.close());

async function start(): Promise<TestKit> {
  kit = await createTestKit({ plugins: [codeMode()], tools: [ping] });
  return kit;
}

describe('the meta-tools a model reads the bindings through', () => {
  it('answers read_tool_file for a path it does not list with NOT_FOUND, and a listed one with its text', async () => {
    const k = await start();
    const missing = await k.call('read_tool_file', { path: 'servers/nowhere.d.ts' });
    expect(stoppedWith(missing)).toBe(CodeModeErrorCode.NOT_FOUND);
    expect(textOf(missing)).toContain('list_tool_files');
    expect(textOf(await k.call('read_tool_file', { path: 'servers/local.d.ts' }))).toContain('ping');
  });

  it('answers get_tool_docs for a tool no script can call with NOT_FOUND, and a callable one with its docs', async () => {
    const k = await start();
    const missing = await k.call('get_tool_docs', { tool: 'local.nowhere' });
    expect(stoppedWith(missing)).toBe(CodeModeErrorCode.NOT_FOUND);
    expect(textOf(missing)).toContain('local.nowhere');
    expect(textOf(await k.call('get_tool_docs', { tool: 'local.ping' }))).toContain('ping');
  });
});
