import { CLIENT_CAPABILITIES_META_KEY, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import type { InputRequests, InputRequiredSpec } from '@modelcontextprotocol/server';
import type { CallContext, CallToolResult, ServerContext, SluiceServer } from '@sluice/core';
import { RoundStateSeal } from './request-state.js';

// The 2026-07-28 multi-round-trip tools: a tool answers "I need input" with an
// InputRequiredResult, and the client calls again with the answers.

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/**
 * Returns the SDK's InputRequiredResult from a tool handler. The pipeline
 * types a handler's result as CallToolResult, which has no input-required
 * variant; whether such a result crosses the pipeline is what the suite
 * checks (see the baselines).
 */
function askFor(spec: InputRequiredSpec): CallToolResult {
  return inputRequired(spec) as unknown as CallToolResult;
}

function mcpOf(ctx: CallContext): ServerContext {
  if (ctx.mcp === undefined) throw new Error('This tool asks its client for input, so it must be called over MCP');
  return ctx.mcp;
}

function askName(message: string) {
  return inputRequired.elicit({
    message,
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  });
}

/** The accepted elicitation answer for a key, as a string field, or undefined. */
function answered(mcp: ServerContext, key: string, field: string): string | undefined {
  const view = inputResponse(mcp.mcpReq.inputResponses, key);
  if (view.kind !== 'elicit' || view.action !== 'accept') return undefined;
  const value = view.content?.[field];
  return typeof value === 'string' ? value : undefined;
}

function sampledText(mcp: ServerContext, key: string): string | undefined {
  const view = inputResponse(mcp.mcpReq.inputResponses, key);
  if (view.kind !== 'sampling') return undefined;
  const content = Array.isArray(view.result.content) ? view.result.content[0] : view.result.content;
  return content?.type === 'text' ? content.text : undefined;
}

function rootsOf(mcp: ServerContext, key: string): string[] | undefined {
  const view = inputResponse(mcp.mcpReq.inputResponses, key);
  return view.kind === 'roots' ? view.roots.map((root) => root.uri) : undefined;
}

const CAPITAL_QUESTION = inputRequired.createMessage({
  messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
  maxTokens: 100,
});

function registerSingleRoundTools(server: SluiceServer): void {
  server.tool({
    name: 'test_input_required_result_elicitation',
    description: 'Asks the user for their name, then greets them.',
    annotations: { readOnlyHint: true },
    handler: (_args, ctx) => {
      const name = answered(mcpOf(ctx), 'user_name', 'name');
      // Missing, declined or malformed answers are asked again rather than failed.
      if (name === undefined) return askFor({ inputRequests: { user_name: askName('What is your name?') } });
      return text(`Hello, ${name}!`);
    },
  });
  server.tool({
    name: 'test_input_required_result_sampling',
    description: 'Asks the client model a question and reports its answer.',
    annotations: { readOnlyHint: true },
    handler: (_args, ctx) => {
      const answer = sampledText(mcpOf(ctx), 'capital_question');
      if (answer === undefined) return askFor({ inputRequests: { capital_question: CAPITAL_QUESTION } });
      return text(`The model answered: ${answer}`);
    },
  });
  server.tool({
    name: 'test_input_required_result_list_roots',
    description: "Asks for the client's roots and lists them.",
    annotations: { readOnlyHint: true },
    handler: (_args, ctx) => {
      const roots = rootsOf(mcpOf(ctx), 'client_roots');
      if (roots === undefined) return askFor({ inputRequests: { client_roots: inputRequired.listRoots() } });
      return text(`Client roots: ${roots.join(', ') || '(none)'}`);
    },
  });
}

function registerStatefulTools(server: SluiceServer, seal: RoundStateSeal): void {
  server.tool({
    name: 'test_input_required_result_request_state',
    description: 'Asks for a confirmation and carries signed state between rounds.',
    handler: async (_args, ctx) => {
      const mcp = mcpOf(ctx);
      const state = await seal.open('test_input_required_result_request_state', mcp);
      const view = inputResponse(mcp.mcpReq.inputResponses, 'confirm');
      if (state !== undefined && view.kind === 'elicit') return text(`state-ok: confirmation ${view.action}`);
      const requestState = await seal.seal(
        { tool: 'test_input_required_result_request_state', round: 1, answers: {} },
        mcp,
      );
      const confirm = inputRequired.elicit({
        message: 'Please confirm',
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      });
      return askFor({ inputRequests: { confirm }, requestState });
    },
  });
  server.tool({
    name: 'test_input_required_result_multiple_inputs',
    description: 'Asks for a name, a generated greeting and the client roots at once.',
    handler: async (_args, ctx) => {
      const mcp = mcpOf(ctx);
      const state = await seal.open('test_input_required_result_multiple_inputs', mcp);
      const name = answered(mcp, 'user_name', 'name');
      const greeting = sampledText(mcp, 'greeting');
      const roots = rootsOf(mcp, 'client_roots');
      if (state !== undefined && name !== undefined && greeting !== undefined && roots !== undefined) {
        return text(`${greeting} ${name} (roots: ${roots.join(', ') || 'none'})`);
      }
      const inputRequests: InputRequests = {
        user_name: askName('What is your name?'),
        greeting: inputRequired.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
          maxTokens: 50,
        }),
        client_roots: inputRequired.listRoots(),
      };
      const requestState = await seal.seal(
        { tool: 'test_input_required_result_multiple_inputs', round: 1, answers: {} },
        mcp,
      );
      return askFor({ inputRequests, requestState });
    },
  });
  server.tool({
    name: 'test_input_required_result_multi_round',
    description: 'Asks for a name, then a favourite colour, one round each.',
    handler: async (_args, ctx) => {
      const mcp = mcpOf(ctx);
      const tool = 'test_input_required_result_multi_round';
      const state = await seal.open(tool, mcp);
      const name = state?.round === 1 ? answered(mcp, 'step1', 'name') : undefined;
      if (name !== undefined) {
        const requestState = await seal.seal({ tool, round: 2, answers: { name } }, mcp);
        const color = inputRequired.elicit({
          message: 'Step 2: What is your favorite color?',
          requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
        });
        return askFor({ inputRequests: { step2: color }, requestState });
      }
      const color = state?.round === 2 ? answered(mcp, 'step2', 'color') : undefined;
      if (state !== undefined && color !== undefined) return text(`${String(state.answers.name)} likes ${color}`);
      const requestState = await seal.seal({ tool, round: 1, answers: {} }, mcp);
      return askFor({ inputRequests: { step1: askName('Step 1: What is your name?') }, requestState });
    },
  });
  server.tool({
    name: 'test_input_required_result_tampered_state',
    description: 'Carries signed state between rounds and refuses state that was altered.',
    handler: async (_args, ctx) => {
      const mcp = mcpOf(ctx);
      const state = await seal.open('test_input_required_result_tampered_state', mcp);
      if (state !== undefined) return text('state verified');
      const requestState = await seal.seal(
        { tool: 'test_input_required_result_tampered_state', round: 1, answers: {} },
        mcp,
      );
      return askFor({ inputRequests: { user_name: askName('What is your name?') }, requestState });
    },
  });
}

/** Only asks for what the client said it can answer. */
function registerCapabilityTools(server: SluiceServer): void {
  server.tool({
    name: 'test_input_required_result_capabilities',
    description: 'Asks only for the kinds of input the client declared it supports.',
    annotations: { readOnlyHint: true },
    handler: (_args, ctx) => {
      const mcp = mcpOf(ctx);
      if (mcp.mcpReq.inputResponses !== undefined) return text('Received the input that could be asked for.');
      const envelope: Record<string, unknown> = mcp.mcpReq.envelope ?? {};
      const declared = (envelope[CLIENT_CAPABILITIES_META_KEY] ?? {}) as Record<string, unknown>;
      const inputRequests: InputRequests = {};
      if (declared.elicitation) inputRequests.user_name = askName('What is your name?');
      if (declared.sampling) inputRequests.capital_question = CAPITAL_QUESTION;
      if (declared.roots) inputRequests.client_roots = inputRequired.listRoots();
      if (Object.keys(inputRequests).length === 0) return text('The client declared no capability to ask through.');
      return askFor({ inputRequests });
    },
  });
  server.tool({
    name: 'test_missing_capability',
    description: 'Needs the client to sample; refused by the protocol when it cannot.',
    handler: (_args, ctx) => {
      const answer = sampledText(mcpOf(ctx), 'capital_question');
      return answer === undefined ? askFor({ inputRequests: { capital_question: CAPITAL_QUESTION } }) : text(answer);
    },
  });
  server.tool({
    name: 'test_streaming_elicitation',
    description: 'Asks the user a question by returning an input request.',
    handler: (_args, ctx) => {
      const name = answered(mcpOf(ctx), 'user_name', 'name');
      return name === undefined
        ? askFor({ inputRequests: { user_name: askName('What is your name?') } })
        : text(`Hello, ${name}!`);
    },
  });
}

export function registerInputRequiredTools(server: SluiceServer, seal = new RoundStateSeal()): void {
  registerSingleRoundTools(server);
  registerStatefulTools(server, seal);
  registerCapabilityTools(server);
}
