import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** Another team's MCP server, written with the bare SDK: Sluice imports its tools. */
export function supplierServer(): McpServer {
  const supplier = new McpServer({ name: 'supplier', version: '3.1.0' });
  supplier.registerTool(
    'quote',
    {
      description: 'The unit price a supplier quotes for an item',
      inputSchema: z.object({ item: z.string() }),
      annotations: { readOnlyHint: true },
    },
    ({ item }) => ({ content: [{ type: 'text', text: `${item}: 0.42 EUR per unit` }] }),
  );
  return supplier;
}
