import { describe, expect, it } from 'vitest';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { MetaKey, adopt, createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { egress, interventionText } from '@sluice/plugin-egress';
import type { EgressRecord } from '@sluice/plugin-egress';
import '@sluice/upstream';

// An upstream whose resource and prompt are far over the limit, imported in-process, read by a real client.

const LIMIT = 64 * 1_024;
const BIG = 'x'.repeat(30 * 1_024 * 1_024);
/** Over the limit, within the read cut (4 × the limit): read, then cut. */
const MID = 'x'.repeat(3 * LIMIT);

function bigUpstream(): McpServer {
  const mcp = new McpServer({ name: 'big', version: '1.0.0' });
  mcp.registerResource('dump', 'big://dump', { mimeType: 'text/plain' }, () => ({
    contents: [{ uri: 'big://dump', mimeType: 'text/plain', text: BIG }],
  }));
  mcp.registerResource('mid', 'big://mid', { mimeType: 'text/plain' }, () => ({
    contents: [{ uri: 'big://mid', mimeType: 'text/plain', text: MID }],
  }));
  mcp.registerResource('small', 'big://small', { mimeType: 'text/plain' }, () => ({
    contents: [{ uri: 'big://small', text: 'small' }],
  }));
  mcp.registerPrompt('long', {}, () => ({
    messages: [
      { role: 'user', content: { type: 'text', text: 'first' } },
      { role: 'assistant', content: { type: 'text', text: BIG } },
      { role: 'user', content: { type: 'text', text: 'never reached' } },
    ],
  }));
  mcp.registerPrompt('mid', {}, () => ({
    messages: [
      { role: 'user', content: { type: 'text', text: 'first' } },
      { role: 'assistant', content: { type: 'text', text: MID } },
      { role: 'user', content: { type: 'text', text: 'never reached' } },
    ],
  }));
  return mcp;
}

async function gateway(mode: 'enforce' | 'audit' = 'enforce'): Promise<{ server: SluiceServer; client: Client }> {
  const server = createServer({
    name: 'gateway',
    version: '1.0.0',
    logger: captureLogger().logger,
    plugins: [egress({ maxPayloadBytes: LIMIT, mode })],
  });
  await server.import({ name: 'big', connection: { type: 'in-process', server: bigUpstream() } });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return { server, client };
}

describe('the egress guard on resources and prompts that cross the gateway', () => {
  it('caps a resource over the limit and ends it with the intervention message', async () => {
    const { server, client } = await gateway();
    const read = await client.readResource({ uri: 'big://mid' }, { cacheMode: 'bypass' });
    expect(Buffer.byteLength(JSON.stringify(read))).toBeLessThanOrEqual(LIMIT);
    const [kept, notice] = read.contents as { uri: string; text: string }[];
    expect(kept!.text.length).toBeGreaterThan(LIMIT / 2);
    expect(MID.startsWith(kept!.text)).toBe(true);
    expect(notice).toEqual({ uri: 'big://mid', mimeType: 'text/plain', text: interventionText(LIMIT) });
    const record = read._meta?.[MetaKey.EGRESS] as EgressRecord;
    expect(record.limitBytes).toBe(LIMIT);
    expect(record.originalBytes).toBeGreaterThan(MID.length);
    await server.close();
  });

  it('refuses a 30 MB resource and prompt past the read cut with UPSTREAM_RESPONSE_TOO_LARGE, as a tool result', async () => {
    const { server, client } = await gateway();
    const tooLarge = { code: 'UPSTREAM_RESPONSE_TOO_LARGE', readLimitBytes: 4 * LIMIT };
    await expect(client.readResource({ uri: 'big://dump' }, { cacheMode: 'bypass' })).rejects.toMatchObject({
      data: tooLarge,
    });
    await expect(client.getPrompt({ name: 'long' })).rejects.toMatchObject({ data: tooLarge });
    await server.close();
  });

  it('leaves a resource within the limit as the upstream sent it', async () => {
    const { server, client } = await gateway();
    const read = await client.readResource({ uri: 'big://small' }, { cacheMode: 'bypass' });
    expect(read.contents).toEqual([{ uri: 'big://small', text: 'small' }]);
    expect(read._meta?.[MetaKey.EGRESS]).toBeUndefined();
    await server.close();
  });

  it('caps a prompt: the messages that fit, the one that does not cut, then the intervention message', async () => {
    const { server, client } = await gateway();
    const got = await client.getPrompt({ name: 'mid' });
    expect(Buffer.byteLength(JSON.stringify(got))).toBeLessThanOrEqual(LIMIT);
    expect(got.messages[0]).toEqual({ role: 'user', content: { type: 'text', text: 'first' } });
    expect(got.messages[1]?.role).toBe('assistant');
    expect(got.messages.at(-1)).toEqual({ role: 'user', content: { type: 'text', text: interventionText(LIMIT) } });
    expect(JSON.stringify(got)).not.toContain('never reached');
    await server.close();
  });

  it('in audit mode passes the answer whole', async () => {
    const { server, client } = await gateway('audit');
    const read = await client.readResource({ uri: 'big://dump' }, { cacheMode: 'bypass' });
    expect((read.contents[0] as { text: string }).text).toHaveLength(BIG.length);
    await server.close();
  });

  it("caps an adopted server's own 30 MB resource and long prompt, which never cross a proxy", async () => {
    const mcp = bigUpstream();
    const sluice = adopt(mcp, [egress({ maxPayloadBytes: LIMIT })], { logger: captureLogger().logger });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    const read = await client.readResource({ uri: 'big://dump' }, { cacheMode: 'bypass' });
    expect(Buffer.byteLength(JSON.stringify(read))).toBeLessThanOrEqual(LIMIT);
    expect(read.contents.at(-1)).toEqual({ uri: 'big://dump', mimeType: 'text/plain', text: interventionText(LIMIT) });
    const got = await client.getPrompt({ name: 'long' });
    expect(Buffer.byteLength(JSON.stringify(got))).toBeLessThanOrEqual(LIMIT);
    expect(got.messages.at(-1)).toEqual({ role: 'user', content: { type: 'text', text: interventionText(LIMIT) } });
    await client.close();
    await sluice.close();
  });
});
