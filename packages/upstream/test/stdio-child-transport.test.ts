// The lean stdio upstream transport, driven against real child processes: framing across chunks, the
// envelope check (the same verdict as the SDK's message schema), the line cap, stderr, and closing.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseJSONRPCMessage } from '@modelcontextprotocol/client';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { asJsonRpcMessage } from '@sluice/core/internal';
import { StdioChildTransport } from '../src/stdio-child-transport.js';

/** A child that writes the given chunks to stdout, one per turn of its event loop, then waits for stdin to end. */
const WRITER = `
const chunks = JSON.parse(process.env.CHUNKS).map((c) => Buffer.from(c, 'base64'));
let i = 0;
const next = () => { if (i < chunks.length) process.stdout.write(chunks[i++], () => setImmediate(next)); };
next();
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;

function open(chunks: readonly Buffer[], extra: { maxMessageBytes?: number; script?: string } = {}) {
  const transport = new StdioChildTransport({
    command: process.execPath,
    args: ['-e', extra.script ?? WRITER],
    env: { CHUNKS: JSON.stringify(chunks.map((c) => c.toString('base64'))) },
    ...(extra.maxMessageBytes === undefined ? {} : { maxMessageBytes: extra.maxMessageBytes }),
  });
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  transport.onmessage = (m) => {
    messages.push(m);
    wake();
  };
  transport.onerror = (e) => {
    errors.push(e);
    wake();
  };
  transport.onclose = () => {
    closed();
    wake();
  };
  return { transport, messages, errors, done };
}

/** Whoever waits in `until`, woken when something arrives from a child. */
let waiting: Array<() => void> = [];
function wake(): void {
  const woken = waiting;
  waiting = [];
  for (const resolve of woken) resolve();
}

/** Resolves once `check` holds, looking again each time something arrives from a child (not in a busy loop). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise<void>((resolve) => waiting.push(resolve));
}

const id = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }));
const params = fc.dictionary(
  fc.string({ maxLength: 6 }).filter((key) => key !== '_meta'),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);
const message: fc.Arbitrary<JSONRPCMessage> = fc.oneof(
  fc.record({ jsonrpc: fc.constant('2.0' as const), id, method: fc.string({ maxLength: 12 }), params }),
  fc.record({ jsonrpc: fc.constant('2.0' as const), method: fc.string({ maxLength: 12 }) }),
  fc.record({ jsonrpc: fc.constant('2.0' as const), id, result: params }),
  fc.record({
    jsonrpc: fc.constant('2.0' as const),
    id,
    error: fc.record({ code: fc.integer(), message: fc.string({ maxLength: 20 }) }),
  }),
);

/** Splits bytes at the given cut points (each taken modulo the length). */
function cut(bytes: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const p of [...at, bytes.length]) {
    if (p > from) chunks.push(bytes.subarray(from, p));
    from = Math.max(from, p);
  }
  return chunks;
}

describe('StdioChildTransport', () => {
  it('delivers every message in order however the bytes are cut, with CRLF, blank and non-JSON lines', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(message, fc.boolean()), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (items, points) => {
          // A log line and a blank line among the messages are skipped, as the SDK's transport skips them.
          const text = `starting up\n\n${items.map(([m, crlf]) => JSON.stringify(m) + (crlf ? '\r\n' : '\n')).join('')}`;
          const { transport, messages, errors } = open(cut(Buffer.from(text, 'utf8'), points));
          await transport.start();
          await until(() => messages.length >= items.length || errors.length > 0);
          await transport.close();
          expect(errors).toEqual([]);
          // What arrives is the wire form: JSON has no -0, so a generated -0 comes back as 0.
          expect(messages).toEqual(items.map(([m]) => JSON.parse(JSON.stringify(m)) as unknown));
        },
      ),
      { numRuns: 25 },
    );
  });

  it('reports a message that is not JSON-RPC as an error and delivers the next one', async () => {
    const lines = [
      '{"jsonrpc":"2.0","id":1,"result":{},"extra":1}',
      '{"jsonrpc":"2.0","id":true,"result":{}}',
      '{"jsonrpc":"2.0","id":2,"result":{}}',
    ];
    const { transport, messages, errors } = open([Buffer.from(`${lines.join('\n')}\n`)]);
    await transport.start();
    await until(() => messages.length >= 1);
    await transport.close();
    expect(errors).toHaveLength(2);
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
  });

  it('refuses a line over the cap with an error and closes the connection, across chunks too', async () => {
    for (const chunks of [
      [Buffer.from(`${'x'.repeat(300)}\n`)],
      [Buffer.from('y'.repeat(200)), Buffer.from('y'.repeat(200))],
    ]) {
      const { transport, errors, done } = open(chunks, { maxMessageBytes: 256 });
      await transport.start();
      const pid = transport.pid;
      await done;
      expect(errors.map((e) => e.message)).toEqual(['The upstream wrote a line longer than 256 bytes']);
      expect(pid).toBeTypeOf('number');
      expect(transport.pid).toBeUndefined();
    }
  });

  it('passes the child its environment over the default inherited one, and its stderr', async () => {
    const script = `process.stderr.write('from stderr ' + process.env.CHUNKS + ' ' + (process.env.PATH ? 'path' : 'no path') + '\\n'); process.stdin.resume();`;
    const { transport, done } = open([], { script });
    let stderr = '';
    transport.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      wake();
    });
    await transport.start();
    await until(() => stderr.includes('\n'));
    await transport.close();
    await done;
    expect(stderr).toBe('from stderr [] path\n');
  });

  it('signals a child that does not exit when its stdin ends', async () => {
    const script = `process.stdin.resume(); process.stdin.on('end', () => setInterval(() => {}, 1000));`;
    const { transport, done } = open([], { script });
    await transport.start();
    await transport.close();
    await done;
    await expect(transport.send({ jsonrpc: '2.0', method: 'x' })).rejects.toThrow(/Not connected/);
  });

  it('sends each message as one line', async () => {
    const script = `process.stdin.on('data', (d) => process.stdout.write(d));`;
    const { transport, messages } = open([], { script });
    await transport.start();
    const sent: JSONRPCMessage = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'a\nb' } };
    await transport.send(sent);
    await until(() => messages.length >= 1);
    await transport.close();
    expect(messages).toEqual([sent]);
  });
});

describe('asJsonRpcMessage', () => {
  const token = fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 3 }), fc.boolean(), fc.constant(null));
  /** `_meta` with the fields the message schema looks into, right and wrong. */
  const meta = fc.record(
    {
      progressToken: token,
      'io.modelcontextprotocol/related-task': fc.oneof(
        fc.record({ taskId: token }, { requiredKeys: [] }),
        fc.string({ maxLength: 3 }),
      ),
      other: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  );
  const envelope = fc.record(
    {
      jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), fc.constant(2)),
      id: fc.oneof(
        fc.integer(),
        fc.double(),
        fc.maxSafeInteger().map((n) => n * 2),
        fc.string({ maxLength: 4 }),
        fc.constant(null),
        fc.boolean(),
      ),
      method: fc.oneof(fc.string({ maxLength: 6 }), fc.integer()),
      params: fc.oneof(
        fc.dictionary(fc.constantFrom('_meta', 'a'), fc.oneof(meta, fc.object({ maxDepth: 1 }), fc.string())),
        fc.array(fc.integer(), { maxLength: 2 }),
        fc.constant(null),
      ),
      result: fc.oneof(
        fc.dictionary(fc.constantFrom('_meta', 'a'), fc.oneof(meta, fc.object({ maxDepth: 1 }), fc.string())),
        fc.string(),
      ),
      error: fc.oneof(
        fc.record(
          { code: fc.oneof(fc.integer(), fc.double(), fc.string()), message: fc.oneof(fc.string(), fc.integer()) },
          { requiredKeys: [] },
        ),
        fc.constant(null),
      ),
      extra: fc.integer(),
    },
    { requiredKeys: [] },
  );

  /** Well-formed envelopes whose `_meta` may be wrong inside. */
  const withMeta = fc.oneof(
    fc.record({
      jsonrpc: fc.constant('2.0'),
      id: fc.nat(),
      method: fc.constant('m'),
      params: fc.record({ _meta: meta }),
    }),
    fc.record({ jsonrpc: fc.constant('2.0'), method: fc.constant('m'), params: fc.record({ _meta: meta }) }),
    fc.record({ jsonrpc: fc.constant('2.0'), id: fc.nat(), result: fc.record({ _meta: meta }) }),
  );

  it('accepts exactly what the SDK message schema accepts', () => {
    fc.assert(
      fc.property(fc.oneof(envelope, withMeta, fc.jsonValue({ maxDepth: 2 })), (value) => {
        let sdk = true;
        try {
          parseJSONRPCMessage(value);
        } catch {
          sdk = false;
        }
        let ours = true;
        try {
          asJsonRpcMessage(value, parseJSONRPCMessage);
        } catch {
          ours = false;
        }
        expect(ours).toBe(sdk);
      }),
      { numRuns: process.env.SLUICE_DEEP === '1' ? 50_000 : 1_000 },
    );
  });
});
