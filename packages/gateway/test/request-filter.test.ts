import { describe, expect, it } from 'vitest';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { GatewayConfigInput } from '@sluice/gateway';
import { call, fixtureUpstream, httpClient } from './helpers.js';

const HEADERS = { 'x-sluice-include-tools': 'up_echo, up_release' };

/** Lists and calls through a gateway over HTTP with the filter headers set. */
async function throughGateway(plugins: GatewayConfigInput['plugins']) {
  const gateway = createGateway(
    { listen: { http: { port: 0 } }, upstreams: [fixtureUpstream('up')], plugins },
    { logger: captureLogger().logger },
  );
  const { http } = await gateway.start();
  const client = await httpClient(http!.url, HEADERS);
  try {
    const listed = (await client.listTools()).tools.map((t) => t.name).sort();
    const echo = await call(client, 'up_echo', { text: 'hi' });
    const meta = await call(client, 'up_meta');
    return { listed, echo, meta };
  } finally {
    await client.close();
    await gateway.close();
  }
}

describe("the config's request filter", () => {
  it('is on by default over HTTP: x-sluice-include-tools hides the other tools and refuses calls to them', async () => {
    const { listed, echo, meta } = await throughGateway(undefined);
    expect(listed).toEqual(['up_echo', 'up_release']);
    expect(textOf(echo)).toBe('hi');
    expect(errorOf(meta)?.code).toBe('TOOL_NOT_AVAILABLE');
  });

  it('is off with requestFilter: false, so the headers change nothing', async () => {
    const { listed, meta } = await throughGateway({ requestFilter: false });
    expect(listed).toHaveLength(7);
    expect(meta.isError).toBeFalsy();
  });
});
