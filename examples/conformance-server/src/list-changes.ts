import type { SluiceServer } from '@sluice/core';

const DYNAMIC = 'test_dynamic_tool';

/** A tool that changes the tool list (adds or removes `test_dynamic_tool`), so clients see list_changed. */
export function registerListChangeTool(server: SluiceServer): void {
  server.tool({
    name: 'test_trigger_tool_change',
    description: 'Adds or removes a tool, which changes the tool list.',
    handler: async () => {
      const present = server.tools().some((tool) => tool.name === DYNAMIC);
      if (present) server.removeTool(DYNAMIC);
      else
        server.tool({
          name: DYNAMIC,
          description: 'Appears and disappears.',
          handler: () => ({ content: [{ type: 'text', text: 'here' }] }),
        });
      await server.ready();
      return { content: [{ type: 'text', text: present ? `removed ${DYNAMIC}` : `added ${DYNAMIC}` }] };
    },
  });
}

const DYNAMIC_PROMPT = 'test_dynamic_prompt';

/**
 * A tool that adds or removes a prompt, then announces the change with
 * `server.notify('prompts')`. Prompts live on the SDK instances Sluice
 * creates, so the registration reads the current state each time.
 */
export function registerPromptChangeTool(server: SluiceServer): void {
  let present = false;
  server.extendSdk((sdk) => {
    if (!present) return;
    sdk.registerPrompt(DYNAMIC_PROMPT, { description: 'Appears and disappears.' }, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'here' } }],
    }));
  });
  server.tool({
    name: 'test_trigger_prompt_change',
    description: 'Adds or removes a prompt, which changes the prompt list.',
    handler: () => {
      present = !present;
      server.notify('prompts');
      return { content: [{ type: 'text', text: present ? `added ${DYNAMIC_PROMPT}` : `removed ${DYNAMIC_PROMPT}` }] };
    },
  });
}
