// Egress on every request kind, attacked from outside: a real `sluice serve` in front of a hostile HTTP upstream
// that answers resource reads, prompt gets and completions of any size it is asked for. Answers over the limit are
// cut as tool results are; answers past the read cut are not read further and are refused with the tools' code.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from './helpers.js';
import type { Served } from './helpers.js';

const VERSIONS = ['2025-11-25', '2026-07-28'] as const;
const LIMIT = 1_024;
/** Far past the read cut (4 × LIMIT), and past what the kernel buffers for a socket nobody reads. */
const HUGE = 32 * 1_024 * 1_024;
const EGRESS_META = 'dev.sluice/egress';

/** How each answer of the hostile upstream ended: written whole, or cut off by its reader. */
const endings: { size: number; whole: boolean }[] = [];

/** The answer the hostile upstream gives to one JSON-RPC request (a number: that many bytes of text). */
function answerTo(method: string, params: Record<string, unknown>): unknown {
  switch (method) {
    case 'initialize':
      return {
        protocolVersion: '2025-11-25',
        capabilities: { resources: {}, prompts: {}, completions: {} },
        serverInfo: { name: 'hostile', version: '1.0.0' },
      };
    case 'tools/list':
      return { tools: [] };
    case 'resources/list':
      return { resources: [{ uri: 'mem:///size/10', name: 'sized' }] };
    case 'resources/templates/list':
      return { resourceTemplates: [{ uriTemplate: 'mem:///size/{n}', name: 'sized' }] };
    case 'prompts/list':
      return { prompts: [{ name: 'sized', arguments: [{ name: 'n', required: true }] }] };
    case 'resources/read': {
      const uri = String(params.uri);
      return { contents: [{ uri, mimeType: 'text/plain', text: 'r'.repeat(Number(uri.split('/').pop())) }] };
    }
    case 'prompts/get': {
      const n = Number((params.arguments as Record<string, string>).n);
      return { messages: [{ role: 'user', content: { type: 'text', text: 'p'.repeat(n) } }] };
    }
    case 'completion/complete': {
      // 100 values (the protocol's most) sharing the asked size.
      const n = Number((params.argument as { value: string }).value);
      return { completion: { values: Array.from({ length: 100 }, (_, i) => `${i}:${'c'.repeat(n / 100)}`) } };
    }
    default:
      return undefined;
  }
}

/** Writes a JSON-RPC answer in chunks, recording whether the reader took all of it. */
function send(res: http.ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const ending = { size: body.length, whole: false };
  endings.push(ending);
  res.on('finish', () => (ending.whole = true));
  const CHUNK = 64 * 1_024;
  let at = 0;
  const more = (): void => {
    while (at < body.length) {
      const chunk = body.slice(at, (at += CHUNK));
      if (!res.write(chunk)) {
        res.once('drain', more);
        return;
      }
    }
    res.end();
  };
  res.on('close', () => res.removeAllListeners('drain'));
  more();
}

let hostile: http.Server;
let gateway: Served;

beforeAll(async () => {
  hostile = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(parts).toString('utf8')) as {
        id?: number | string;
        method: string;
        params?: Record<string, unknown>;
      };
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result = answerTo(message.method, message.params ?? {});
      const body =
        result === undefined
          ? { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } }
          : { jsonrpc: '2.0', id: message.id, result };
      send(res, JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
  const { port } = hostile.address() as AddressInfo;
  gateway = await serve({
    listen: { http: { host: '127.0.0.1', port: 0 } },
    upstreams: [{ name: 'hostile', connection: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } }],
    plugins: { egress: { maxPayloadBytes: LIMIT } },
  });
}, 60_000);

afterAll(async () => {
  await gateway.stop();
  hostile.closeAllConnections();
  await new Promise((resolve) => hostile.close(resolve));
});

async function clientOf(version: (typeof VERSIONS)[number]): Promise<Client> {
  const client = new Client(
    { name: 'egress-attacker', version: '1.0.0' },
    version === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(gateway.url));
  return client;
}

/**
 * An answer's JSON size as egress counts it: without the server's identity, which the 2026-07-28 protocol
 * layer adds to every answer's `_meta` after the handlers (and so after every plugin) ran.
 */
function json(answer: { _meta?: Record<string, unknown> }): number {
  const meta = { ...answer._meta };
  delete meta['io.modelcontextprotocol/serverInfo'];
  return Buffer.byteLength(JSON.stringify({ ...answer, ...(answer._meta ? { _meta: meta } : {}) }));
}

/** The last answer of `size` bytes or more the upstream wrote, once its writing ended one way or the other. */
function endingOf(minSize: number) {
  const ending = endings.findLast((e) => e.size >= minSize);
  expect(ending).toBeDefined();
  return ending!;
}

describe('egress caps every request kind, over both protocol versions', () => {
  for (const version of VERSIONS) {
    it(`cuts a completion over the limit to the values that fit, saying there are more (${version})`, async () => {
      const client = await clientOf(version);
      try {
        const answer = await client.complete({
          ref: { type: 'ref/prompt', name: 'sized' },
          argument: { name: 'n', value: '3000' },
        });
        expect(json(answer)).toBeLessThanOrEqual(LIMIT);
        expect(answer.completion.values.length).toBeGreaterThan(0);
        expect(answer.completion.values.length).toBeLessThan(100);
        expect(answer.completion.values[0]).toBe(`0:${'c'.repeat(30)}`);
        expect(answer.completion.hasMore).toBe(true);
        expect(answer.completion.total).toBe(100);
        expect(answer._meta?.[EGRESS_META]).toMatchObject({ limitBytes: LIMIT });
        // Under the limit: untouched.
        const small = await client.complete({
          ref: { type: 'ref/prompt', name: 'sized' },
          argument: { name: 'n', value: '100' },
        });
        expect(small.completion.values).toHaveLength(100);
        expect(small._meta?.[EGRESS_META]).toBeUndefined();
      } finally {
        await client.close();
      }
    });

    it(`cuts a read and a prompt over the limit, as before (${version})`, async () => {
      const client = await clientOf(version);
      try {
        const read = await client.readResource({ uri: 'mem:///size/3000' });
        expect(json(read)).toBeLessThanOrEqual(LIMIT);
        expect(read._meta?.[EGRESS_META]).toMatchObject({ limitBytes: LIMIT });
        const prompt = await client.getPrompt({ name: 'sized', arguments: { n: '3000' } });
        expect(json(prompt)).toBeLessThanOrEqual(LIMIT);
        expect(prompt._meta?.[EGRESS_META]).toMatchObject({ limitBytes: LIMIT });
      } finally {
        await client.close();
      }
    });

    const huge: [string, (client: Client) => Promise<unknown>][] = [
      ['resources/read', (client) => client.readResource({ uri: `mem:///size/${HUGE}` })],
      ['prompts/get', (client) => client.getPrompt({ name: 'sized', arguments: { n: String(HUGE) } })],
      [
        'completion/complete',
        (client) =>
          client.complete({ ref: { type: 'ref/prompt', name: 'sized' }, argument: { name: 'n', value: String(HUGE) } }),
      ],
    ];
    for (const [kind, request] of huge)
      it(`stops reading a huge ${kind} answer at the read cut and refuses it with the tools' code (${version})`, async () => {
        const client = await clientOf(version);
        try {
          const error = await request(client).then(
            () => undefined,
            (e: unknown) => e as { message: string; data?: Record<string, unknown> },
          );
          expect(error?.message).toContain('UPSTREAM_RESPONSE_TOO_LARGE');
          expect(error?.data).toMatchObject({ code: 'UPSTREAM_RESPONSE_TOO_LARGE', readLimitBytes: 4 * LIMIT });
          // The gateway dropped the answer's connection instead of reading 32 MiB of it.
          const ending = endingOf(HUGE);
          await new Promise((resolve) => setImmediate(resolve));
          expect(ending.whole).toBe(false);
        } finally {
          await client.close();
        }
      });
  }
});
