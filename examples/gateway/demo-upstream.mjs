// The demo upstream: a tiny support-desk MCP server on stdio, built with the v2 SDK.
// `check_account` names the next tool in its result's _meta when an account is
// locked, so the gateway's chaining plugin opens the ticket in the same call.
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const server = new McpServer({ name: 'support-desk', version: '1.0.0' });
const text = (value) => ({ content: [{ type: 'text', text: value }] });
let tickets = 0;

server.registerTool(
  'check_account',
  {
    description: 'Looks up the status of a customer account. A locked account is handed to a specialist.',
    inputSchema: z.object({ customerId: z.string().min(1).max(64).describe('The customer id, e.g. "c-1001"') }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async ({ customerId }) => {
    if (!customerId.startsWith('locked-')) return text(`Account ${customerId} is active.`);
    return {
      ...text(`Account ${customerId} is locked after failed sign-ins; it needs a specialist.`),
      _meta: { nextTool: { tool: 'open_ticket', arguments: { customerId, urgency: 'high' } } },
    };
  },
);

server.registerTool(
  'open_ticket',
  {
    description: 'Opens a support ticket for a customer and returns its number.',
    inputSchema: z.object({
      customerId: z.string().min(1).max(64).describe('The customer id'),
      urgency: z.enum(['low', 'high']).describe('How soon a specialist must answer'),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async ({ customerId, urgency }) =>
    text(`Ticket T-${1000 + ++tickets} opened for ${customerId} (${urgency} urgency).`),
);

await server.connect(new StdioServerTransport());
