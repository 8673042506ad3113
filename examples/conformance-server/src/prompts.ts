import { completable, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { RED_PIXEL_PNG } from './media.js';

const WORDS = ['paris', 'park', 'party', 'test', 'testing', 'text'];

/** Prompts (plain, with arguments and completion, with embedded content, and one that needs input). */
export function registerPrompts(mcp: McpServer): void {
  mcp.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments.' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  mcp.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two arguments; the first completes.',
      argsSchema: z.object({
        arg1: completable(z.string().describe('First test argument'), (value) =>
          WORDS.filter((word) => word.startsWith(value)),
        ),
        arg2: z.string().describe('Second test argument'),
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [
        { role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } },
      ],
    }),
  );
  mcp.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'A prompt that embeds a resource.',
      argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  mcp.registerPrompt('test_prompt_with_image', { description: 'A prompt that carries an image.' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
  mcp.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'A prompt that first asks the user for context.' },
    (ctx) => {
      const view = inputResponse(ctx.mcpReq.inputResponses, 'user_context');
      const context =
        view.kind === 'elicit' && typeof view.content?.context === 'string' ? view.content.context : undefined;
      if (context === undefined) {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
            }),
          },
        });
      }
      return {
        messages: [{ role: 'user', content: { type: 'text', text: `Answer with this context in mind: ${context}` } }],
      };
    },
  );
}
