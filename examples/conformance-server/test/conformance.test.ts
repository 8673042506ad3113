import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpListener, SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { buildConformanceServer } from '../src/server.js';
import type { Revision } from './conformance-cli.js';
import { baselineOf, runConformance } from './conformance-cli.js';
import type { RunningGateway } from './gateway-cli.js';
import { startGateway } from './gateway-cli.js';
import '@sluice/http';

const REVISIONS: readonly Revision[] = ['2025-11-25', '2026-07-28'];
const SUITE_TIMEOUT_MS = 300_000;

let server: SluiceServer;
let listener: HttpListener;

beforeAll(async () => {
  server = buildConformanceServer({ logger: captureLogger().logger });
  listener = await server.listen();
});
afterAll(async () => server.close());

describe('the official MCP conformance suite against the Sluice conformance server', () => {
  for (const revision of REVISIONS) {
    it(
      `passes every scenario ${revision} requires, except the checks its baseline lists`,
      async () => {
        const run = await runConformance(listener.url, revision, baselineOf('server', revision));
        expect(run.code, run.summary).toBe(0);
      },
      SUITE_TIMEOUT_MS,
    );
  }
});

describe('the same suite through `sluice serve` fronting the conformance server', () => {
  let gateway: RunningGateway | undefined;
  beforeAll(async () => {
    gateway = await startGateway(listener.url);
  }, 60_000);
  afterAll(async () => gateway?.stop());

  for (const revision of REVISIONS) {
    it(
      `passes every scenario ${revision} requires, except the gateway gaps its baseline lists`,
      async () => {
        const running = gateway!;
        const run = await runConformance(running.url, revision, baselineOf('gateway', revision));
        expect(run.code, `${run.summary}\n--- gateway log (tail) ---\n${running.log().slice(-3000)}`).toBe(0);
      },
      SUITE_TIMEOUT_MS,
    );
  }
});
