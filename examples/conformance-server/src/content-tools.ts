import type { SluiceServer } from '@sluice/core';
import { RED_PIXEL_PNG, SILENT_WAV } from './media.js';

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

/** JSON Schema 2020-12 keywords a server must show unchanged in `tools/list`. */
const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

/** Tools whose results exercise each kind of content block, and a tool that fails. */
export function registerContentTools(server: SluiceServer): void {
  server.tool({
    name: 'test_simple_text',
    description: 'Returns one text block.',
    annotations: READ_ONLY,
    handler: () => ({ content: [{ type: 'text', text: 'This is a simple text response for testing.' }] }),
  });
  server.tool({
    name: 'test_image_content',
    description: 'Returns a 1x1 red PNG image.',
    annotations: READ_ONLY,
    handler: () => ({ content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }] }),
  });
  server.tool({
    name: 'test_audio_content',
    description: 'Returns a short silent WAV clip.',
    annotations: READ_ONLY,
    handler: () => ({ content: [{ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' }] }),
  });
  server.tool({
    name: 'test_embedded_resource',
    description: 'Returns an embedded text resource.',
    annotations: READ_ONLY,
    handler: () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  });
  server.tool({
    name: 'test_multiple_content_types',
    description: 'Returns text, an image and an embedded resource together.',
    annotations: READ_ONLY,
    handler: () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  });
  server.tool({
    name: 'test_error_handling',
    description: 'Always fails, to show how a tool error reaches the client.',
    annotations: READ_ONLY,
    handler: () => {
      throw new Error('This tool intentionally returns an error for testing');
    },
  });
  server.tool({
    name: 'json_schema_2020_12_tool',
    description: 'Takes arguments described with JSON Schema 2020-12 keywords.',
    annotations: READ_ONLY,
    inputSchema: SCHEMA_2020_12,
    handler: (args) => ({ content: [{ type: 'text', text: `Received: ${JSON.stringify(args)}` }] }),
  });
}
