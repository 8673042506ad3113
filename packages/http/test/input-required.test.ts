import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { acceptedContent, inputRequired } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { createServer, definePlugin, invalidParams } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import '@sluice/http';

const confirmation = z.object({ confirm: z.boolean() });

function deployServer(postCalls: string[]) {
  const server = createServer({
    name: 'deployer',
    version: '1',
    logger: captureLogger().logger,
    plugins: [
      definePlugin({
        name: 'rewriter',
        version: '1.0.0',
        apply: ({ hooks }) =>
          hooks.postCall.tap('rewriter', (result) => {
            postCalls.push(result.content[0]?.type ?? 'no content');
            return result;
          }),
      }),
    ],
  });
  server.tool({
    name: 'deploy',
    inputSchema: z.object({ env: z.string() }),
    handler: ({ env }, ctx) => {
      const answer = acceptedContent(ctx.mcp?.mcpReq.inputResponses, 'confirm', confirmation);
      if (answer?.confirm !== true) {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({ message: `Deploy to ${env}?`, requestedSchema: confirmation }),
          },
        });
      }
      return { content: [{ type: 'text', text: `deployed to ${env}` }] };
    },
  });
  server.tool({
    name: 'strict',
    handler: () => {
      throw invalidParams('the request state is not valid');
    },
  });
  return server;
}

describe('multi-round calls', () => {
  for (const mode of ['legacy', { pin: '2026-07-28' }] as const) {
    it(`carries a handler's input-required answer to a ${mode === 'legacy' ? '2025-11-25' : '2026-07-28'} client and back, without postCall touching it`, async () => {
      const postCalls: string[] = [];
      const server = deployServer(postCalls);
      const listener = await server.listen();
      const client = new Client(
        { name: 'c', version: '1' },
        { versionNegotiation: { mode }, capabilities: { elicitation: { form: {} } } },
      );
      client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { confirm: true } }));
      await client.connect(new StreamableHTTPClientTransport(listener.url));
      const result = await client.callTool({ name: 'deploy', arguments: { env: 'prod' } });
      expect(textOf(result)).toBe('deployed to prod');
      expect(postCalls).toEqual(['text']);
      await client.close();
      await server.close();
    });
  }

  it('lets a handler answer with a deliberate -32602', async () => {
    const server = deployServer([]);
    await expect(server.call('strict')).rejects.toMatchObject({ rpcCode: -32602 });
    await server.close();
  });
});
