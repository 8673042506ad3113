// `sluice serve` as a child process, attacked over loopback by callers that
// try to take a shared pool from the others or to make it read without end.
// Each test reproduces one attack of issue 30 and holds the gateway to its bound.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, fixtureUpstream, httpClient, serve } from './helpers.js';
import type { Served } from './helpers.js';

const AGENT_KEY = 'fair-shares-agent-key-0123456789';
const OPS_KEY = 'fair-shares-ops-key-0123456789ab';
/** What an endless uploader sends at most before the test calls the server's reading unbounded. */
const UPLOAD_CAP = 64 * 2 ** 20;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

interface Upload {
  /** The status line's code, or undefined when no answer came. */
  readonly status: number | undefined;
  /** Bytes of body written into the socket. */
  readonly sent: number;
  /** Whether the server closed the connection before the uploader reached its cap. */
  readonly cut: boolean;
}

/**
 * A chunked POST that never ends by itself: body chunks are written for as
 * long as the socket takes them, up to `UPLOAD_CAP`.
 */
function endlessUpload(url: URL, headers: Record<string, string> = {}): Promise<Upload> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let answer = '';
    let sent = 0;
    let settled = false;
    const finish = (cut: boolean) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      resolve({ status: match ? Number(match[1]) : undefined, sent, cut });
    };
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    const pump = () => {
      while (!settled && sent < UPLOAD_CAP) {
        sent += CHUNK.length;
        const framed = Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from('\r\n')]);
        if (!socket.write(framed)) return void socket.once('drain', pump);
      }
      if (sent >= UPLOAD_CAP) finish(false);
    };
    socket.on('connect', () => {
      const lines = [
        `POST ${url.pathname} HTTP/1.1`,
        `Host: ${url.host}`,
        'Content-Type: application/json',
        'Accept: application/json, text/event-stream',
        'Transfer-Encoding: chunked',
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      ];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      pump();
    });
  });
}

const alive = (served: Served): boolean => served.run.child.exitCode === null && served.run.child.signalCode === null;

describe('sluice serve with API keys, against callers that take more than their share', () => {
  let gw: Served;

  beforeAll(async () => {
    gw = await serve({
      listen: {
        http: {
          port: 0,
          auth: {
            type: 'apiKeys',
            keys: [
              { name: 'agent', key: AGENT_KEY },
              { name: 'ops', key: OPS_KEY, scopes: ['sluice:admin'] },
            ],
          },
        },
      },
      upstreams: [fixtureUpstream('fx')],
      admin: {},
    });
  }, 60_000);

  afterAll(async () => {
    await gw.stop();
  });

  const normalCall = async (): Promise<string> => {
    const client = await httpClient(gw.url, { authorization: `Bearer ${AGENT_KEY}` });
    try {
      const result = await call(client, 'fx_echo', { text: 'still here' });
      return JSON.stringify(result.content);
    } finally {
      await client.close();
    }
  };

  // Issue 30, item 4: after its 401 an unauthenticated chunked upload was read to its end (54 GiB in 31 s).
  it('stops reading an unauthenticated chunked upload once it has answered 401', async () => {
    const upload = await endlessUpload(gw.url);
    expect(upload.status).toBe(401);
    expect(upload.cut).toBe(true);
    expect(upload.sent).toBeLessThan(UPLOAD_CAP);
    expect(alive(gw)).toBe(true);
    expect(await normalCall()).toContain('still here');
  }, 60_000);

  // Issue 30, item 4: the body limit applied only when a chunked body ended.
  it('answers 413 to an authenticated chunked upload at the body limit and stops reading it', async () => {
    const upload = await endlessUpload(gw.url, {
      authorization: `Bearer ${AGENT_KEY}`,
      'mcp-protocol-version': '2026-07-28',
    });
    expect(upload.status).toBe(413);
    expect(upload.cut).toBe(true);
    expect(upload.sent).toBeLessThan(UPLOAD_CAP);
    expect(await normalCall()).toContain('still here');
  }, 60_000);

  // Issue 30, item 4: the admin surface's refusals too.
  it('stops reading an unauthenticated chunked upload to the admin API once it has answered 401', async () => {
    const upload = await endlessUpload(new URL('/admin/v1/ledger/approve', gw.url));
    expect(upload.status).toBe(401);
    expect(upload.cut).toBe(true);
    expect(upload.sent).toBeLessThan(UPLOAD_CAP);
  }, 60_000);

  // Issue 30, item 7: `admin: {}` made every key an admin.
  it('refuses the admin API to a key without the dedicated admin scope when admin.scopes is left out', async () => {
    const ledger = new URL('/admin/v1/upstreams', gw.url);
    const agent = await fetch(ledger, { headers: { authorization: `Bearer ${AGENT_KEY}` } });
    expect(agent.status).toBe(403);
    expect(await agent.text()).toContain('sluice:admin');
    const ops = await fetch(ledger, { headers: { authorization: `Bearer ${OPS_KEY}` } });
    expect(ops.status).toBe(200);
  });
});

/** A loopback authorization server: its introspection endpoint answers what `answer` says for each token. */
async function authorizationServer(answer: (token: string) => Record<string, unknown>) {
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const token = new URLSearchParams(body).get('token') ?? '';
      asked.push(token);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer(token)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, asked, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('sluice serve with OAuth introspection at a loopback authorization server', () => {
  const RESOURCE = 'http://fair-shares.sluice.test/mcp';
  let as: Awaited<ReturnType<typeof authorizationServer>>;
  let gw: Served;

  beforeAll(async () => {
    as = await authorizationServer((token) => ({
      active: true,
      exp: Math.floor(Date.now() / 1000) + 600,
      scope: 'read',
      client_id: 'reader',
      ...(token.startsWith('for-us-') ? { aud: RESOURCE } : {}),
      ...(token.startsWith('for-others-') ? { aud: 'http://elsewhere.sluice.test/mcp' } : {}),
    }));
    gw = await serve({
      listen: {
        http: {
          port: 0,
          auth: {
            type: 'oauth',
            authorizationServers: [as.origin],
            resource: RESOURCE,
            introspection: { endpoint: `${as.origin}/introspect`, clientId: 'sluice', clientSecret: 'secret' },
          },
        },
      },
      upstreams: [fixtureUpstream('fx')],
    });
  }, 60_000);

  afterAll(async () => {
    await gw.stop();
    await as.close();
  });

  // Issue 30, item 5: an introspection answer without `aud` let a token for another resource server in.
  it('refuses an active token whose introspection answer names no audience', async () => {
    const refused = await httpClient(gw.url, { authorization: 'Bearer no-audience-token' }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    expect(String(refused)).toMatch(/401|unauthori[sz]ed|aud/i);
    const others = await httpClient(gw.url, { authorization: 'Bearer for-others-token' }).catch(
      (error: unknown) => error,
    );
    expect(others).toBeInstanceOf(Error);
    const client = await httpClient(gw.url, { authorization: 'Bearer for-us-token' });
    const result = await call(client, 'fx_echo', { text: 'audience ok' });
    expect(JSON.stringify(result.content)).toContain('audience ok');
    await client.close();
  }, 60_000);
});
