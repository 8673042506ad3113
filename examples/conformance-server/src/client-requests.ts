import { setTimeout as sleep } from 'node:timers/promises';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import type { CallContext, CallToolResult, ServerContext, SluiceServer } from '@sluice/core';
import { z } from 'zod';

// Tools that talk back to the client while they run: log messages, progress,
// and the 2025-11-25 server-to-client requests (sampling, elicitation).

const STEP_MS = 50;

type RequestedSchema = ElicitRequestFormParams['requestedSchema'];

/** The SDK request context; a call made in-process has none, and these tools need one. */
function mcpOf(ctx: CallContext): ServerContext {
  if (ctx.mcp === undefined) throw new Error('This tool talks to its client, so it must be called over MCP');
  return ctx.mcp;
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

async function logThreeSteps(_args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
  const req = mcpOf(ctx).mcpReq;
  await req.log('info', 'Tool execution started');
  await sleep(STEP_MS, undefined, { signal: ctx.signal });
  await req.log('info', 'Tool processing data');
  await sleep(STEP_MS, undefined, { signal: ctx.signal });
  await req.log('info', 'Tool execution completed');
  return text('Logged three messages while running.');
}

async function reportProgress(_args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
  const req = mcpOf(ctx).mcpReq;
  const token = req._meta?.progressToken;
  for (const progress of [0, 50, 100]) {
    if (progress > 0) await sleep(STEP_MS, undefined, { signal: ctx.signal });
    if (token !== undefined)
      await req.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100 } });
  }
  return text('Reported progress 0, 50 and 100 of 100.');
}

/** The SEP-1034 elicitation: a default for every primitive type. */
const DEFAULTS_SCHEMA: RequestedSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Your name', default: 'John Doe' },
    age: { type: 'integer', description: 'Your age', default: 30 },
    score: { type: 'number', description: 'Your score', default: 95.5 },
    status: { type: 'string', description: 'Your status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', description: 'Verified?', default: true },
  },
};

/** The SEP-1330 elicitation: every way of offering a choice. */
const ENUMS_SCHEMA: RequestedSchema = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
} as const;

async function elicitAndReport(ctx: CallContext, params: ElicitRequestFormParams): Promise<CallToolResult> {
  const answer = await mcpOf(ctx).mcpReq.elicitInput(params);
  return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
}

export function registerClientRequestTools(server: SluiceServer): void {
  // The suite calls the same behaviour by two names: one per protocol generation.
  for (const name of ['test_tool_with_logging', 'test_logging_tool']) {
    server.tool({
      name,
      description: 'Sends three log messages while it runs.',
      annotations: { readOnlyHint: true },
      handler: logThreeSteps,
    });
  }
  server.tool({
    name: 'test_tool_with_progress',
    description: 'Reports progress three times while it runs.',
    annotations: { readOnlyHint: true },
    handler: reportProgress,
  });
  server.tool({
    name: 'test_sampling',
    description: 'Asks the client to sample a completion for a prompt.',
    inputSchema: z.object({ prompt: z.string().describe('The prompt to send to the model') }),
    handler: async ({ prompt }, ctx) => {
      const reply = await mcpOf(ctx).mcpReq.requestSampling({
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 100,
      });
      const content = Array.isArray(reply.content) ? reply.content[0] : reply.content;
      return text(`LLM response: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`);
    },
  });
  server.tool({
    name: 'test_elicitation',
    description: 'Asks the user for a username and an email address.',
    inputSchema: z.object({ message: z.string().describe('The message to show the user') }),
    handler: async ({ message }, ctx) => {
      const answer = await mcpOf(ctx).mcpReq.elicitInput({
        message,
        requestedSchema: {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
      });
      return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
    },
  });
  server.tool({
    name: 'test_elicitation_sep1034_defaults',
    description: 'Asks the user for values that all have defaults.',
    handler: (_args, ctx) =>
      elicitAndReport(ctx, { message: 'Please review your details', requestedSchema: DEFAULTS_SCHEMA }),
  });
  server.tool({
    name: 'test_elicitation_sep1330_enums',
    description: 'Asks the user to choose, in every enum style.',
    handler: (_args, ctx) =>
      elicitAndReport(ctx, { message: 'Please make your choices', requestedSchema: ENUMS_SCHEMA }),
  });
}
