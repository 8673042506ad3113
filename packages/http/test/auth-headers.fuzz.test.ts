// Hostile Authorization headers against a listener that authenticates: bad
// schemes, huge values, many headers, control and non-ASCII bytes, forged
// JWTs. Every request gets a 4xx (or the connection is closed by the HTTP
// parser); never a 5xx, never a crash, and a real caller still gets through.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '@sluice/core';
import type { HttpListener, SluiceServer } from '@sluice/core';
import '@sluice/http';

/** Too random to guess (32 random bytes in hex): a guessable key would be refused with the fuzzer's source. */
const KEY = randomBytes(32).toString('hex');
let server: SluiceServer;
let listener: HttpListener;

beforeAll(async () => {
  server = createServer({ name: 'auth-fuzz', version: '1.0.0' });
  server.tool({ name: 'ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) });
  listener = await server.listen({ auth: { type: 'apiKeys', keys: [{ name: 'real', key: KEY }] } });
});
afterAll(() => server.close());

/** Sends raw bytes as one HTTP request and reads the status code (undefined when the server closed without one). */
function rawRequest(headerLines: readonly Buffer[]): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(listener.port, '127.0.0.1');
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const head = Buffer.concat([
      Buffer.from(`POST ${listener.url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`),
      ...headerLines.flatMap((line) => [line, Buffer.from('\r\n')]),
      Buffer.from(`Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`),
    ]);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
      resolve(status === undefined ? undefined : Number(status));
    });
    socket.end(head);
  });
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const headerValue = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('Bearer', 'Bearer ', 'bearer x', 'Basic Zm9vOmJhcg==', 'Bearer  ', `Bearer ${KEY} extra`, 'Token x'),
  fc.integer({ min: 1, max: 40_000 }).map((n) => `Bearer ${'A'.repeat(n)}`),
  fc
    .record({ alg: fc.constantFrom('none', 'HS256', 'RS256', 'ES256', ''), kid: fc.string({ maxLength: 20 }) })
    .map((header) => `Bearer ${b64(header)}.${b64({ sub: 'x', exp: 9_999_999_999 })}.`),
  fc.string({ maxLength: 50 }).map((s) => `Bearer ${s}.${s}.${s}`),
);

function initializeWithKey(): Promise<Response> {
  return fetch(listener.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'real', version: '1.0.0' } },
    }),
  });
}

describe('authorization headers', () => {
  it('answers every hostile Authorization header with a 4xx or a closed connection, never a 5xx', async () => {
    // The real caller connects before the attack, and again after: a key too random to guess passes the source
    // the guess throttle refuses (a guessable one would wait out the window with the guesses, used before or not).
    expect((await initializeWithKey()).status).toBe(200);
    await fc.assert(
      fc.asyncProperty(fc.array(headerValue, { minLength: 1, maxLength: 5 }), fc.boolean(), async (values, utf8) => {
        const lines = values.map((v) =>
          Buffer.concat([Buffer.from('Authorization: '), Buffer.from(v, utf8 ? 'utf8' : 'latin1')]),
        );
        const status = await rawRequest(lines);
        if (status !== undefined) {
          expect(status).toBeGreaterThanOrEqual(400);
          expect(status).toBeLessThan(500);
        }
      }),
      { numRuns: 300 },
    );
    // Still serving, and a real caller gets through.
    const initialize = await initializeWithKey();
    expect(initialize.status).toBe(200);
    expect(initialize.headers.get('mcp-session-id')).toBeTruthy();
  });

  it('refuses 200 Authorization headers in one request without a 5xx', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => Buffer.from(`Authorization: Bearer k${i}`));
    const status = await rawRequest(lines);
    expect(status === undefined || (status >= 400 && status < 500)).toBe(true);
  });
});
