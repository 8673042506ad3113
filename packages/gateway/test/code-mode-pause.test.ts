// A code-mode script pauses at a call that needs approval and resumes without making its earlier calls again:
// a real gateway (Redis store), a real upstream over loopback HTTP that counts its writes, real SDK clients of both
// protocol versions.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import type { CallToolResult, HttpListener, SluiceServer } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { roundTripClient } from './helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';

const run = promisify(execFile);

/** What the upstream saw: every write and every deploy that really ran. */
const seen = { writes: [] as string[], deploys: 0 };

function countingUpstream(): SluiceServer {
  const server = createServer({ name: 'ops', version: '1.0.0', logger: captureLogger().logger });
  server.tool({
    name: 'write',
    description: 'Writes a line.',
    inputSchema: { type: 'object', properties: { line: { type: 'string' } }, required: ['line'] },
    handler: (args) => {
      seen.writes.push(String(args.line));
      return { content: [{ type: 'text', text: `wrote ${seen.writes.length}` }] };
    },
  });
  server.tool({
    name: 'report',
    description: 'Returns a long report.',
    handler: () => ({ content: [{ type: 'text', text: 'r'.repeat(4_096) }] }),
  });
  server.tool({
    name: 'deploy',
    description: 'Deploys the service.',
    handler: () => {
      seen.deploys++;
      return { content: [{ type: 'text', text: 'deployed' }] };
    },
  });
  return server;
}

const SCRIPT = "const wrote = await ops.write({ line: 'before deploy' }); await ops.deploy(); return { wrote };";
const ACCEPT = { action: 'accept', content: { approve: true } };

let redis: RedisProcess;
let upstream: SluiceServer;
let upstreamListener: HttpListener;
const open: Gateway[] = [];

beforeAll(async () => {
  redis = await startRedis();
  upstream = countingUpstream();
  upstreamListener = await upstream.listen();
});
afterAll(async () => {
  await upstream.close();
  await redis.stop();
});
afterEach(async () => {
  for (const gateway of open.splice(0)) await gateway.close();
  await run('redis-cli', ['-u', redis.url, 'FLUSHALL']);
  seen.writes = [];
  seen.deploys = 0;
});

const SECRET = 'a replica-wide secret of at least thirty-two bytes';

async function gateway(
  approvalTimeoutMs = 300_000,
  codeMode: Record<string, unknown> = {},
  roundStateSecret?: string,
): Promise<URL> {
  const created = createGateway(
    {
      ...(roundStateSecret === undefined ? {} : { roundStateSecret }),
      listen: { http: { port: 0 } },
      store: { redis: redis.url },
      upstreams: [{ name: 'ops', namespace: 'ops', connection: { type: 'http', url: upstreamListener.url.href } }],
      plugins: {
        risk: {
          ledger: { persist: 'memory' },
          tools: [{ match: 'ops_deploy', hitl: true }],
          approval: { timeoutMs: approvalTimeoutMs, ...(roundStateSecret === undefined ? {} : { secret: SECRET }) },
        },
        codeMode,
      },
    },
    { logger: captureLogger().logger },
  );
  open.push(created);
  const { http } = await created.start();
  return http!.url;
}

interface Question {
  resultType?: string;
  requestState: string;
  inputRequests?: Record<string, unknown>;
}

/** Runs the script on a 2026-07-28 client until it pauses, and answers its question. */
async function paused(url: URL, code = SCRIPT) {
  const client = await roundTripClient(url, {});
  const question = (await client.first('execute_code', { code })) as Question;
  return {
    client,
    question,
    retry: (state: string, answer: unknown = ACCEPT, source = code) =>
      client.retry('execute_code', { code: source }, state, answer),
  };
}

const returned = (result: CallToolResult): unknown => {
  expect(result.isError, textOf(result)).toBeFalsy();
  return (result.structuredContent as { result: unknown }).result;
};

/** The journals code mode keeps in Redis. */
async function journalKeys(): Promise<string[]> {
  const { stdout } = await run('redis-cli', ['-u', redis.url, '--scan', '--pattern', '*code-mode/journal/*']);
  return stdout.split('\n').filter((line) => line.length > 0);
}

describe('a script pauses at a call that needs approval (2026-07-28) and resumes from its journal', () => {
  it('answers input-required with the approval question; after approval the write happened exactly once', async () => {
    const url = await gateway();
    const { client, question, retry } = await paused(url);
    try {
      expect(question.resultType).toBe('input_required');
      expect(Object.keys(question.inputRequests ?? {})).toEqual(['sluice_approval']);
      expect(question.requestState.startsWith('sluice.code.v1.')).toBe(true);
      // The write ran, the deploy waits for a person.
      expect(seen).toEqual({ writes: ['before deploy'], deploys: 0 });
      expect(await journalKeys()).toHaveLength(1);

      const result = await retry(question.requestState);
      expect(returned(result)).toEqual({ wrote: 'wrote 1' });
      expect(seen).toEqual({ writes: ['before deploy'], deploys: 1 });
      // Resumed once: the journal is gone, and the same state again resumes nothing.
      expect(await journalKeys()).toHaveLength(0);
      const again = await retry(question.requestState);
      expect(errorOf(again)?.code).toBe('JOURNAL_USED');
      expect(seen).toEqual({ writes: ['before deploy'], deploys: 1 });
    } finally {
      await client.close();
    }
  });

  it("resumes on another replica with the same store and roundStateSecret (the journal's key by default)", async () => {
    const first = await gateway(300_000, {}, SECRET);
    const second = await gateway(300_000, {}, SECRET);
    const asking = await paused(first);
    await asking.client.close();
    const answering = await roundTripClient(second, {});
    try {
      const result = await answering.retry('execute_code', { code: SCRIPT }, asking.question.requestState, ACCEPT);
      expect(returned(result)).toEqual({ wrote: 'wrote 1' });
      expect(seen).toEqual({ writes: ['before deploy'], deploys: 1 });
    } finally {
      await answering.close();
    }
  });

  it('a declined approval resumes the script with the refusal, still without writing again', async () => {
    const url = await gateway();
    const code = "await ops.write({ line: 'x' }); try { await ops.deploy(); } catch (e) { return e.code; }";
    const { client, question, retry } = await paused(url, code);
    try {
      expect(returned(await retry(question.requestState, { action: 'decline' }))).toBe('APPROVAL_DECLINED');
      expect(seen).toEqual({ writes: ['x'], deploys: 0 });
    } finally {
      await client.close();
    }
  });

  it('refuses a tampered state, and a journal edited in the store, replaying nothing', async () => {
    const url = await gateway();
    const { client, question, retry } = await paused(url);
    try {
      const state = question.requestState;
      const [body, mac] = state.slice('sluice.code.v1.'.length).split('.') as [string, string];
      const sealed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
      const forged = `sluice.code.v1.${Buffer.from(JSON.stringify({ ...sealed, e: Number(sealed.e) + 1 })).toString('base64url')}.${mac}`;
      expect(errorOf(await retry(forged))?.code).toBe('JOURNAL_INVALID');

      // The journal itself, edited where it is kept: the write's recorded reply is changed.
      const [key] = await journalKeys();
      const stored = JSON.parse((await run('redis-cli', ['-u', redis.url, 'GET', key!])).stdout) as string;
      expect(stored).toContain('wrote 1');
      const edited = JSON.stringify(stored.replace('wrote 1', 'wrote 9'));
      await run('redis-cli', ['-u', redis.url, 'SET', key!, edited, 'KEEPTTL']);
      const refused = await retry(state);
      expect(errorOf(refused)?.code, textOf(refused)).toBe('JOURNAL_INVALID');
      expect(seen).toEqual({ writes: ['before deploy'], deploys: 0 });
    } finally {
      await client.close();
    }
  });

  it('keeps a journal only up to journal.maxBytes: past it the script cannot pause, and says why', async () => {
    const url = await gateway(300_000, { journal: { maxBytes: 1_024 } });
    const code = "await ops.write({ line: 'x' }); const r = await ops.report(); await ops.deploy(); return r.length;";
    const { client, question } = await paused(url, code);
    try {
      const result = question as unknown as CallToolResult;
      expect(errorOf(result)?.code, textOf(result)).toBe('JOURNAL_TOO_LARGE');
      expect(await journalKeys()).toHaveLength(0);
      expect(seen).toEqual({ writes: ['x'], deploys: 0 });
    } finally {
      await client.close();
    }
  });

  it('refuses a state retried with another script', async () => {
    const url = await gateway();
    const { client, question, retry } = await paused(url);
    try {
      const other = await retry(question.requestState, ACCEPT, `${SCRIPT} // changed`);
      expect(errorOf(other)?.code).toBe('JOURNAL_INVALID');
      expect(textOf(other)).toMatch(/source differs/);
      expect(seen).toEqual({ writes: ['before deploy'], deploys: 0 });
    } finally {
      await client.close();
    }
  });

  it('stops a resumed script whose calls differ from its journal (JOURNAL_MISMATCH)', async () => {
    const url = await gateway();
    const code = 'await ops.write({ line: String(Math.random()) }); await ops.deploy(); return 1;';
    const { client, question, retry } = await paused(url, code);
    try {
      const result = await retry(question.requestState);
      expect(errorOf(result)?.code).toBe('JOURNAL_MISMATCH');
      expect(textOf(result)).toMatch(/other arguments/);
      expect(seen.writes).toHaveLength(1);
      expect(seen.deploys).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('a script resumed past the approval lapse ends cleanly with APPROVAL_TIMEOUT; nothing runs again', async () => {
    const url = await gateway(200);
    const code = "await ops.write({ line: 'x' }); try { await ops.deploy(); } catch (e) { return e.code; }";
    const { client, question, retry } = await paused(url, code);
    try {
      // Past the approval's lapse (not a timing assertion: the lapse must be over before the answer comes).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(returned(await retry(question.requestState))).toBe('APPROVAL_TIMEOUT');
      expect(seen).toEqual({ writes: ['x'], deploys: 0 });
      expect(await journalKeys()).toHaveLength(0);
    } finally {
      await client.close();
    }
  });
});

describe('on 2025-11-25 the script waits for the approval', () => {
  it('asks by elicitation within the call; the write and the deploy each run once', async () => {
    const url = await gateway();
    const client = new Client({ name: 'legacy', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    let forms = 0;
    client.setRequestHandler('elicitation/create', () => {
      forms++;
      return Promise.resolve(ACCEPT as never);
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    try {
      const result = await client.callTool({ name: 'execute_code', arguments: { code: SCRIPT } });
      expect(returned(result)).toEqual({ wrote: 'wrote 1' });
      expect(forms).toBe(1);
      expect(seen).toEqual({ writes: ['before deploy'], deploys: 1 });
    } finally {
      await client.close();
    }
  });
});
