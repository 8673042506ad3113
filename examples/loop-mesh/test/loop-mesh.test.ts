import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { startMesh, stopMesh } from '../src/mesh.js';
import type { Service } from '../src/mesh.js';

describe('the loop mesh', () => {
  let services: Service[] = [];
  afterEach(async () => stopMesh(services));

  it('refuses the call that would go a -> b -> c -> a with LOOP_DETECTED; every service keeps serving', async () => {
    services = await startMesh({ guard: true, logger: captureLogger().logger });
    // Import time: a service never imports its own tools back through the ring.
    expect(services[0]!.skipped.map((s) => [s.name, s.reason])).toContainEqual([
      'a.lookup',
      'Denied by denyToolPrefix (a.)',
    ]);

    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(services[0]!.url));
    const result = await client.callTool({ name: 'a.lookup', arguments: { key: 'k' } });
    expect(result.isError).toBe(true);
    expect(errorOf(result)?.code).toBe('LOOP_DETECTED');
    expect(textOf(result)).toContain('a.lookup -> b.lookup -> c.lookup -> a.lookup');
    await client.close();

    for (const service of services) {
      const probe = new Client({ name: 'probe', version: '1' });
      await probe.connect(new StreamableHTTPClientTransport(service.url));
      expect((await probe.listTools()).tools.map((t) => t.name)).toContain(`${service.name}.lookup`);
      await probe.close();
    }
  });
});
