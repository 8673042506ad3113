import { z } from 'zod';
import { createServer } from '@sluice/core';
import type { Logger, SluiceServer } from '@sluice/core';
import { loopGuard } from '@sluice/plugin-loop-guard';
import '@sluice/http';
import '@sluice/upstream';

/** One service of the mesh: its server, its URL, and what its import skipped. */
export interface Service {
  readonly name: string;
  readonly server: SluiceServer;
  readonly url: URL;
  skipped: readonly { name: string; reason: string; by: string }[];
}

export interface MeshOptions {
  /** Whether each service runs the loop guard. */
  readonly guard: boolean;
  readonly logger?: Logger;
}

/**
 * Three services, each on its own loopback port. Each exposes `<name>.lookup`,
 * which asks the next service's lookup: a → b → c → a. The imports close the
 * same ring: c imports a, b imports c, a imports b.
 */
export async function startMesh(options: MeshOptions): Promise<Service[]> {
  const names = ['a', 'b', 'c'];
  const services: Service[] = [];
  for (const [index, name] of names.entries()) {
    const next = following(names, index);
    const server = createServer({
      name: `service-${name}`,
      version: '1.0.0',
      plugins: options.guard ? [loopGuard({ denyToolPrefix: `${name}.` })] : [],
      ...(options.logger ? { logger: options.logger } : {}),
    });
    server.tool({
      name: `${name}.lookup`,
      description: `Looks a key up, asking service ${next} for what it does not know`,
      inputSchema: z.object({ key: z.string() }),
      handler: ({ key }, ctx) => ctx.call(`${next}.lookup`, { key }),
    });
    const listener = await server.listen();
    services.push({ name, server, url: listener.url, skipped: [] });
  }
  // Import backwards so that each service's import sees the tools the next one already imported.
  for (const [index, service] of [...services.entries()].reverse()) {
    const next = following(services, index);
    const result = await service.server.import({
      name: `service-${next.name}`,
      connection: { type: 'http', url: next.url.href },
      timeoutMs: 5_000,
    });
    service.skipped = result.skipped;
  }
  return services;
}

/** The member after `index` in a ring: the last one's next is the first. */
function following<T>(ring: readonly T[], index: number): T {
  const member = ring[(index + 1) % ring.length];
  if (member === undefined) throw new Error(`a ring of ${ring.length} has no member after index ${index}`);
  return member;
}

export async function stopMesh(services: readonly Service[]): Promise<void> {
  await Promise.all(services.map((s) => s.server.close()));
}
