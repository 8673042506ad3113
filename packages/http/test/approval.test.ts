import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { CoreErrorCode, SluiceError, Stage, Tokens, createServer, definePlugin } from '@sluice/core';
import type { ApprovalDecision, Approver, CallContext, Outcome, SluiceServer } from '@sluice/core';
import { captureLogger, createTestKit, textOf } from '@sluice/testing';
import '@sluice/http';

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

const ran = { content: [{ type: 'text' as const, text: 'ran' }] };

describe('ctx.approve()', () => {
  it('throws APPROVAL_UNAVAILABLE when no plugin registered an approver', async () => {
    let caught: unknown;
    const kit = await createTestKit({
      tools: [
        {
          name: 'ask',
          handler: async (_args: Record<string, unknown>, ctx: CallContext) => {
            caught = await ctx.approve({ message: 'May I?' }).catch((error: unknown) => error);
            return ran;
          },
        },
      ],
    });
    open.push(kit);
    await kit.call('ask');
    expect(SluiceError.is(caught) && caught.code).toBe(CoreErrorCode.APPROVAL_UNAVAILABLE);
  });

  it('delegates to the approver registered under Tokens.Approver', async () => {
    const asked: string[] = [];
    const approver: Approver = {
      approve: async (ctx, request) => {
        asked.push(`${ctx.tool.name}: ${request.message}`);
        return { approved: false, reason: 'declined' };
      },
    };
    const registering = definePlugin({
      name: 'approver',
      version: '1.0.0',
      apply: ({ services }) => services.container.register(Tokens.Approver, { useValue: approver }),
    });
    let decision: ApprovalDecision | undefined;
    const kit = await createTestKit({
      plugins: [registering],
      tools: [
        {
          name: 'ask',
          handler: async (_args: Record<string, unknown>, ctx: CallContext) => (
            (decision = await ctx.approve({ message: 'May I?' })),
            ran
          ),
        },
      ],
    });
    open.push(kit);
    await kit.call('ask');
    expect(asked).toEqual(['ask: May I?']);
    expect(decision).toEqual({ approved: false, reason: 'declined' });
  });
});

/**
 * A preCall tap that answers the first round with an input-required result
 * (one confirmation form) and lets the retry through when it carries a yes.
 */
function confirming(outcomes: Outcome[]) {
  return definePlugin({
    name: 'confirm',
    version: '1.0.0',
    apply({ hooks }) {
      hooks.preCall.tap({ name: 'confirm', stage: Stage.APPROVAL }, (ctx) => {
        const answer = ctx.mcp?.mcpReq.inputResponses?.confirm as { action?: string } | undefined;
        if (answer?.action === 'accept' && ctx.mcp?.mcpReq.requestState() === 'round-1') return undefined;
        return {
          resultType: 'input_required',
          inputRequests: {
            confirm: {
              method: 'elicitation/create',
              params: { mode: 'form', message: 'Run it?', requestedSchema: { type: 'object', properties: {} } },
            },
          },
          requestState: 'round-1',
        };
      });
      hooks.settled.tap('confirm', (_ctx, outcome) => void outcomes.push(outcome));
    },
  });
}

function serverWith(outcomes: Outcome[]): SluiceServer {
  const server = createServer({
    name: 's',
    version: '1.0.0',
    plugins: [confirming(outcomes)],
    logger: captureLogger().logger,
  });
  server.tool({ name: 'go', handler: () => ran });
  open.push(server);
  return server;
}

function client(options: ConstructorParameters<typeof Client>[1] = {}): Client {
  const c = new Client({ name: 'c', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, ...options });
  c.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: {} }));
  open.push(c);
  return c;
}

describe('an input-required answer from preCall', () => {
  it('reaches a 2026-07-28 client as is, and the retry it sends runs the call', async () => {
    const outcomes: Outcome[] = [];
    const server = serverWith(outcomes);
    const manual = client({
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      inputRequired: { autoFulfill: false },
    });
    await manual.connect(new StreamableHTTPClientTransport((await server.listen()).url));
    const first = (await manual.callTool(
      { name: 'go', arguments: {} },
      {
        allowInputRequired: true,
      },
    )) as Record<string, unknown>;
    expect(first).toMatchObject({
      resultType: 'input_required',
      requestState: 'round-1',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    });
    const retry = {
      name: 'go',
      arguments: {},
      inputResponses: { confirm: { action: 'accept', content: {} } },
      requestState: 'round-1',
    };
    expect(textOf((await manual.callTool(retry as never, { allowInputRequired: true })) as never)).toBe('ran');
    expect(outcomes.map((o) => (o.status === 'refused' ? `refused ${o.code}` : o.status))).toEqual([
      'refused INPUT_REQUIRED',
      'ok',
    ]);
  });

  it('is fulfilled for a 2025-11-25 client by the SDK, which asks it and calls again', async () => {
    const outcomes: Outcome[] = [];
    const server = serverWith(outcomes);
    const legacy = client();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await legacy.connect(clientSide);
    expect(textOf((await legacy.callTool({ name: 'go', arguments: {} })) as never)).toBe('ran');
    expect(outcomes.map((o) => o.status)).toEqual(['refused', 'ok']);
  });
});
