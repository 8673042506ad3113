import type { SluiceServer } from '@sluice/core';

const DYNAMIC = 'test_dynamic_tool';

/** A tool that changes the tool list (adds or removes `test_dynamic_tool`), so clients see list_changed. */
export function registerListChangeTool(server: SluiceServer): void {
  server.tool({
    name: 'test_trigger_tool_change',
    description: 'Adds or removes a tool, which changes the tool list.',
    handler: async () => {
      const present = server.tools().some((tool) => tool.name === DYNAMIC);
      if (present) server.removeTools([DYNAMIC]);
      else server.tool({ name: DYNAMIC, description: 'Appears and disappears.', handler: () => ({ content: [{ type: 'text', text: 'here' }] }) });
      await server.ready();
      return { content: [{ type: 'text', text: present ? `removed ${DYNAMIC}` : `added ${DYNAMIC}` }] };
    },
  });
}
