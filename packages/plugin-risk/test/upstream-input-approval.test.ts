import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { createServer } from '@sluice/core';
import type { HttpListener, SluiceServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { RiskEvent, risk } from '@sluice/plugin-risk';
import '@sluice/http';
import '@sluice/upstream';

// One 2026-07-28 call that needs both a person's approval (at the gateway) and the upstream's own input:
// the approval round comes first, then the upstream's, and the call completes with both answered once.

/** How many times the upstream ran the call to its end (it greeted). */
let greeted = 0;

function asker(): SluiceServer {
  const server = createServer({ name: 'asker', version: '1.0.0', logger: captureLogger().logger });
  server.tool({
    name: 'ask',
    description: 'Asks for a name, then greets.',
    handler: (_args, ctx) => {
      const req = ctx.mcp?.mcpReq;
      const view = inputResponse(req?.inputResponses, 'who');
      if (view.kind === 'elicit' && view.action === 'accept') {
        greeted++;
        const state: unknown = req?.requestState();
        return { content: [{ type: 'text', text: `hello ${String(view.content?.name)} (state ${String(state)})` }] };
      }
      const ask = inputRequired.elicit({
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      });
      return inputRequired({ inputRequests: { who: ask }, requestState: 'upstream-state' });
    },
  });
  return server;
}

let up: SluiceServer;
let upListener: HttpListener;
let gateway: SluiceServer;
let listener: HttpListener;
const logs = captureLogger();

beforeAll(async () => {
  up = asker();
  upListener = await up.listen();
  gateway = createServer({
    name: 'gateway',
    version: '1.0.0',
    logger: logs.logger,
    plugins: [risk({ ledger: { persist: 'memory' }, tools: [{ match: 'ask', server: 'asker', hitl: true }] })],
  });
  await gateway.import({ name: 'asker', connection: { type: 'http', url: upListener.url.href } });
  listener = await gateway.listen();
});

afterAll(async () => {
  await gateway.close();
  await up.close();
});

/** A 2026-07-28 client that answers no round itself: `call` sends `ask` with the round's fields given. */
async function manual(name: string) {
  const client = new Client(
    { name, version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(listener.url));
  const call = (extra: Record<string, unknown>) =>
    client.callTool({ name: 'ask', arguments: {}, ...extra }, { allowInputRequired: true }) as Promise<{
      resultType?: string;
      requestState?: string;
      isError?: boolean;
      content?: Array<{ text?: string }>;
    }>;
  return { client, call };
}

describe("a risk approval and an upstream's own input request in one call", () => {
  it('asks the person once and the upstream once, and the call completes', async () => {
    const asked: string[] = [];
    const client = new Client(
      { name: 'modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler('elicitation/create', (request) => {
      const form = request.params as { message: string; requestedSchema: { properties: Record<string, unknown> } };
      asked.push(form.message);
      const content: Record<string, string | boolean> =
        'approve' in form.requestedSchema.properties ? { approve: true } : { name: 'Ada' };
      return { action: 'accept' as const, content };
    });
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    const result = await client.callTool({ name: 'ask', arguments: {} });
    expect(textOf(result)).toBe('hello Ada (state upstream-state)');
    expect(asked).toHaveLength(2);
    expect(asked[1]).toBe('Your name?');
    expect(new Set(logs.events(RiskEvent.APPROVAL_DECIDED).map((e) => e.decision))).toEqual(new Set(['approved']));
    await client.close();
  });

  it('does not let a spent approval stand without the round Sluice sealed around it', async () => {
    const { client, call } = await manual('manual');
    const approval = await call({});
    expect(approval.resultType).toBe('input_required');
    const approvalState = approval.requestState!;
    const upstreamRound = await call({
      requestState: approvalState,
      inputResponses: { sluice_approval: { action: 'accept', content: { approve: true } } },
    });
    expect(upstreamRound.resultType).toBe('input_required');
    // Replaying the approval state on its own, without an answer, is refused: it was used.
    const replay = await call({ requestState: approvalState });
    expect(replay.isError).toBe(true);
    await client.close();
  });

  it("runs the call once for one approval, however often the upstream's sealed round is sent again", async () => {
    // Attack: one approval, then the round Sluice sealed around the upstream's own question answered over and
    // over: each retry was approved again (the approval's mark said granted), and the upstream ran it each time.
    const { client, call } = await manual('replayer');
    const approval = await call({});
    const upstreamRound = await call({
      requestState: approval.requestState,
      inputResponses: { sluice_approval: { action: 'accept', content: { approve: true } } },
    });
    expect(upstreamRound.resultType).toBe('input_required');
    const answered = {
      requestState: upstreamRound.requestState,
      inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } },
    };
    const before = greeted;
    expect((await call(answered)).content?.[0]?.text).toMatch(/^hello Ada/);
    for (let i = 0; i < 5; i++) expect((await call(answered)).isError).toBe(true);
    expect(greeted - before).toBe(1);
    await client.close();
  });
});
