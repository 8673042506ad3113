// A script pauses at a call whose answer is input-required (here a local tool that asks its 2026-07-28 client) and
// resumes from its journal: real server over loopback HTTP, a real 2026-07-28 client that answers by hand.
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import type { CallToolResult, SluiceServer } from '@sluice/core';
import { FakeClock, captureLogger, errorOf, textOf } from '@sluice/testing';
import '@sluice/http';
import { CodeModeErrorCode, CodeModeEvent, codeMode } from '@sluice/plugin-code-mode';
import type { CodeModeOptions } from '@sluice/plugin-code-mode';
import { registerPauseTools, resultOf } from './helpers.js';

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

interface Question {
  resultType?: string;
  requestState: string;
  inputRequests?: Record<string, unknown>;
}

async function start(options: CodeModeOptions = {}) {
  const logs = captureLogger();
  const clock = new FakeClock(Date.now());
  const writes: string[] = [];
  const server: SluiceServer = createServer({
    name: 'pausing',
    version: '1.0.0',
    logger: logs.logger,
    clock,
    plugins: [codeMode(options)],
  });
  registerPauseTools(server, writes);
  const listener = await server.listen();
  open.push(server);
  const client = new Client(
    { name: 'by-hand', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(listener.url));
  open.push(client);
  const send = (params: Record<string, unknown>) =>
    client.callTool(params as never, { allowInputRequired: true }) as Promise<unknown>;
  return {
    writes,
    logs,
    clock,
    first: async (code: string) => (await send({ name: 'execute_code', arguments: { code } })) as Question,
    retry: async (code: string, requestState: string, name = 'Grace') =>
      (await send({
        name: 'execute_code',
        arguments: { code },
        inputResponses: { who: { action: 'accept', content: { name } } },
        requestState,
      })) as CallToolResult,
  };
}

const SCRIPT = "const wrote = await local.write({ line: 'once' }); return { wrote, hello: await local.ask() };";

describe('a script pauses at an input-required call and resumes from its journal', () => {
  it('answers with the call question; the retry replays the write and runs only the asking call', async () => {
    const k = await start();
    const question = await k.first(SCRIPT);
    expect(question.resultType).toBe('input_required');
    expect(Object.keys(question.inputRequests ?? {})).toEqual(['who']);
    expect(k.writes).toEqual(['once']);
    const paused = k.logs.records.find((r) => r.event === CodeModeEvent.SCRIPT);
    expect(paused?.outcome).toBe(CodeModeErrorCode.SCRIPT_PAUSED);

    expect(resultOf(await k.retry(SCRIPT, question.requestState))).toEqual({ wrote: 'wrote 1', hello: 'hello Grace' });
    expect(k.writes).toEqual(['once']);
    expect(errorOf(await k.retry(SCRIPT, question.requestState))?.code).toBe(CodeModeErrorCode.JOURNAL_USED);
    expect(k.writes).toEqual(['once']);
  });

  it('refuses an altered state and another script (JOURNAL_INVALID), replaying nothing', async () => {
    const k = await start();
    const { requestState } = await k.first(SCRIPT);
    const altered = `${requestState.slice(0, -2)}${requestState.endsWith('AA') ? 'AB' : 'AA'}`;
    expect(errorOf(await k.retry(SCRIPT, altered))?.code).toBe(CodeModeErrorCode.JOURNAL_INVALID);
    const other = await k.retry(`${SCRIPT}\n// another`, requestState);
    expect(errorOf(other)?.code).toBe(CodeModeErrorCode.JOURNAL_INVALID);
    expect(textOf(other)).toMatch(/source differs/);
    expect(k.writes).toEqual(['once']);
  });

  it('refuses a journal past journal.ttlMs (JOURNAL_EXPIRED)', async () => {
    const k = await start({ journal: { ttlMs: 60_000 } });
    const { requestState } = await k.first(SCRIPT);
    k.clock.advance(60_001);
    expect(errorOf(await k.retry(SCRIPT, requestState))?.code).toBe(CodeModeErrorCode.JOURNAL_EXPIRED);
    expect(k.writes).toEqual(['once']);
  });

  it('stops a resumed script whose calls differ from the journal (JOURNAL_MISMATCH)', async () => {
    const k = await start();
    const code = 'await local.write({ line: String(Math.random()) }); return await local.ask();';
    const { requestState } = await k.first(code);
    const result = await k.retry(code, requestState);
    expect(errorOf(result)?.code).toBe(CodeModeErrorCode.JOURNAL_MISMATCH);
    expect(k.writes).toHaveLength(1);
  });

  it('cannot pause with more than journal.maxBytes of earlier replies (JOURNAL_TOO_LARGE)', async () => {
    const k = await start({ journal: { maxBytes: 1_024 } });
    const result = (await k.first('await local.report(); return await local.ask();')) as unknown as CallToolResult;
    expect(errorOf(result)?.code).toBe(CodeModeErrorCode.JOURNAL_TOO_LARGE);
  });
});
