import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogger } from '@sluice/testing';
import { createGateway, parseGatewayConfig } from '@sluice/gateway';
import { fixtureUpstream, httpClient, opsAndAgentKeys } from './helpers.js';

/** A loopback guardrail: the upstream's `echo` is poisoned, everything else clean. */
let guardrail: Server;
let judgeUrl: string;
const asked: string[] = [];

beforeAll(async () => {
  guardrail = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const { definition } = JSON.parse(body) as { definition: { name: string } };
      asked.push(definition.name);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ poisoned: definition.name === 'echo', reason: 'the guardrail flags echo' }));
    });
  });
  await new Promise<void>((resolve) => guardrail.listen(0, '127.0.0.1', resolve));
  judgeUrl = `http://127.0.0.1:${(guardrail.address() as AddressInfo).port}/v1/judge`;
});

afterAll(async () => {
  guardrail.closeAllConnections();
  await new Promise((resolve) => guardrail.close(resolve));
});

describe('plugins.risk.scan.judge', () => {
  it('takes an HTTP endpoint in the config, and only that', () => {
    const config = parseGatewayConfig({ plugins: { risk: { scan: { judge: { url: judgeUrl }, timeoutMs: 500 } } } });
    expect(config.plugins.risk?.scan).toMatchObject({ judge: { url: judgeUrl }, timeoutMs: 500, cacheSize: 1000 });
    expect(() => parseGatewayConfig({ plugins: { risk: { scan: { judge: 'http://x' } } } })).toThrow(
      /plugins\.risk\.scan\.judge/,
    );
    expect(() => parseGatewayConfig({ plugins: { risk: { scan: { judge: { url: judgeUrl, model: 'x' } } } } })).toThrow(
      /plugins\.risk\.scan\.judge/,
    );
  });

  it("keeps out what the guardrail judges poisoned under policy: block, and logs the verdict's hit", async () => {
    const capture = captureLogger();
    const gateway = createGateway(
      {
        listen: { http: { port: 0 } },
        upstreams: [fixtureUpstream('fx')],
        plugins: { risk: { ledger: { persist: 'memory' }, policy: 'block', scan: { judge: { url: judgeUrl } } } },
      },
      { logger: capture.logger },
    );
    try {
      const { http } = await gateway.start();
      const client = await httpClient(http?.url as URL);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain('fx_echo');
      expect(names).toContain('fx_meta');
      expect(asked).toContain('echo');
      expect(capture.events('PoisoningHit')).toContainEqual(
        expect.objectContaining({ tool: 'fx_echo', pattern: 'JUDGE_VERDICT', excerpt: 'the guardrail flags echo' }),
      );
      await client.close();
    } finally {
      await gateway.close();
    }
  });

  it("shows the judge's verdict with the scan's hits in the console, and publishes it in _meta, under policy: warn", async () => {
    const ops = 'judge-ops-key-0123456789abcdef';
    const agent = 'judge-agent-key-0123456789abcdef';
    const gateway = createGateway(
      {
        listen: { http: { port: 0, auth: opsAndAgentKeys(ops, agent) } },
        upstreams: [fixtureUpstream('fx')],
        plugins: { risk: { ledger: { persist: 'memory' }, scan: { judge: { url: judgeUrl } } } },
        admin: { scopes: ['admin'] },
      },
      { logger: captureLogger().logger },
    );
    try {
      const { http } = await gateway.start();
      const client = await httpClient(http?.url as URL, { authorization: `Bearer ${agent}` });
      const echo = (await client.listTools()).tools.find((t) => t.name === 'fx_echo');
      expect(echo?._meta?.['dev.sluice/risk']).toMatchObject({
        poisoning: ['JUDGE_VERDICT'],
        judge: { reason: 'the guardrail flags echo', severity: 'high' },
      });
      const page = await fetch(new URL('/console/tools?q=fx_echo', http?.url), {
        headers: { authorization: `Bearer ${ops}` },
      });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('<b>JUDGE_VERDICT</b> (high) in /: <mark>the guardrail flags echo</mark>');
      await client.close();
    } finally {
      await gateway.close();
    }
  });
});
