// A stdio upstream's log line carries no mark of the call it belongs to: while exactly one call is in flight,
// Sluice relays it to that call's client, and outside calls to every session that asked for logs. An upstream
// that writes the answer and then a line, read by the gateway in one chunk, had the line taken for the call
// that had just been answered: only that call's client heard it, the other sessions never did.
import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { setSessionLevel } from '@sluice/core/internal';
import { eventually } from '../../core/test/fixtures/upstream-helpers.js';
import '../src/index.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/answer-and-log.mjs', import.meta.url));

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close().catch(() => {});
  // In-process sessions share one level: put back the one that lets every line through.
  setSessionLevel(undefined, 'debug');
});

/** A client of `server` that records the log lines it hears and counts the roots/list requests it is asked. */
async function listener(server: SluiceServer): Promise<{ client: Client; heard: string[]; asked: () => number }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'listener', version: '1.0.0' }, { capabilities: { roots: {} } });
  const heard: string[] = [];
  let asked = 0;
  client.setNotificationHandler('notifications/message', (n) => void heard.push(String(n.params.data)));
  client.setRequestHandler('roots/list', () => {
    asked++;
    return { roots: [] };
  });
  await client.connect(clientSide);
  open.push(client);
  return { client, heard, asked: () => asked };
}

async function gateway(): Promise<SluiceServer> {
  const server = createServer({ name: 'gw', version: '1.0.0' });
  open.push(server);
  await server.import({ name: 'up', connection: { type: 'stdio', command: process.execPath, args: [FIXTURE] } });
  return server;
}

/** A gateway in front of the fixture, a session that calls its tools, and another that asked for every line at info. */
async function sessions() {
  const server = await gateway();
  const caller = await listener(server);
  const other = await listener(server);
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test relays
  await other.client.setLoggingLevel('info');
  return { caller, other };
}

describe("a stdio upstream's log line read in one chunk with a call's answer", () => {
  it("after the answer, is no longer the call's: every session that asked for logs hears it", async () => {
    const { caller, other } = await sessions();
    for (let round = 0; round < 5; round++) {
      await caller.client.callTool({ name: 'answer_then_log', arguments: { text: String(round) } });
      await eventually(() => other.heard.includes(`after:${round}`), `the other session to hear line ${round}`);
    }
  });

  it("before the answer, is the call's: only its client hears it", async () => {
    const { caller, other } = await sessions();
    await caller.client.callTool({ name: 'log_then_answer', arguments: { text: 'x' } });
    expect(caller.heard).toEqual(['during:x']);
    // A line for everyone sent afterwards reaches the other session; the call's line never did.
    await caller.client.callTool({ name: 'answer_then_log', arguments: { text: 'y' } });
    await eventually(() => other.heard.includes('after:y'), 'the line for everyone');
    expect(other.heard).not.toContain('during:x');
  });

  it("after an answer whose id is written as a string, is no longer the call's either", async () => {
    const { caller, other } = await sessions();
    await caller.client.callTool({ name: 'answer_as_text_then_log', arguments: { text: 's' } });
    await eventually(() => other.heard.includes('after:s'), 'the other session to hear the line');
  });
});

describe("a stdio upstream's request read in one chunk with a call's answer", () => {
  it("before the answer, is the call's: its client is asked; after it, no client is", async () => {
    const { caller, other } = await sessions();
    await caller.client.callTool({ name: 'ask_then_answer', arguments: { text: 'before' } });
    await eventually(() => caller.asked() === 1, 'the caller to be asked for its roots');
    await caller.client.callTool({ name: 'answer_then_ask', arguments: { text: 'after' } });
    // The upstream wrote the request before this line: once the line is heard, the request was handled.
    await caller.client.callTool({ name: 'answer_then_log', arguments: { text: 'mark' } });
    await eventually(() => other.heard.includes('after:mark'), 'the line written after the request');
    expect(caller.asked()).toBe(1);
    expect(other.asked()).toBe(0);
  });
});
