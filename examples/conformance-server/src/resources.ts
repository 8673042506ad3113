import { ProtocolError, ProtocolErrorCode, ResourceTemplate } from '@modelcontextprotocol/server';
import type { McpServer } from '@modelcontextprotocol/server';
import { RED_PIXEL_PNG } from './media.js';

const STATIC_TEXT = 'test://static-text';
const STATIC_BINARY = 'test://static-binary';
const WATCHED = 'test://watched-resource';

/**
 * Resources, a resource template and subscriptions, registered on each SDK
 * server the Sluice server creates. Nothing here ever changes, so a
 * subscription is acknowledged and no update is ever due.
 */
export function registerResources(mcp: McpServer): void {
  mcp.registerResource(
    'static-text',
    STATIC_TEXT,
    { description: 'A fixed text resource.', mimeType: 'text/plain' },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
    }),
  );
  mcp.registerResource(
    'static-binary',
    STATIC_BINARY,
    { description: 'A fixed 1x1 PNG image.', mimeType: 'image/png' },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'image/png', blob: RED_PIXEL_PNG }],
    }),
  );
  mcp.registerResource(
    'watched',
    WATCHED,
    { description: 'A resource clients may subscribe to.', mimeType: 'text/plain' },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content.' }],
    }),
  );
  mcp.registerResource(
    'template-data',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Data for an id, from a URI template.', mimeType: 'application/json' },
    (uri, variables) => {
      const id = String(variables.id);
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          },
        ],
      };
    },
  );
  registerSubscriptions(mcp, new Set([STATIC_TEXT, STATIC_BINARY, WATCHED]));
}

function registerSubscriptions(mcp: McpServer, known: ReadonlySet<string>): void {
  mcp.server.registerCapabilities({ resources: { subscribe: true } });
  const acknowledge = (uri: string) => {
    if (!known.has(uri))
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri });
    return {};
  };
  mcp.server.setRequestHandler('resources/subscribe', (request) => acknowledge(request.params.uri));
  mcp.server.setRequestHandler('resources/unsubscribe', (request) => acknowledge(request.params.uri));
}
