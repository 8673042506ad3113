import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
// The program's own tsyringe, with the polyfill first, as tsyringe asks.
import 'reflect-metadata';
import { inject, injectable } from 'tsyringe';
import { describe, expect, it } from 'vitest';
import {
  CoreErrorCode,
  MemoryStore,
  SluiceError,
  Tokens,
  createServer,
  createJsonLogger,
  definePlugin,
} from '@sluice/core';
import { systemClock } from '@sluice/core/internal';
import { captureLogger } from '../../testing/src/index.js';
import type { Services, Store } from '@sluice/core';

const quiet = () => createJsonLogger({ level: 'silent', write: () => {} });

/** The services a plugin is given in apply(). */
function servicesOf(options: { store?: Store } = {}): { services: Services; server: ReturnType<typeof createServer> } {
  let seen: Services | undefined;
  const probe = definePlugin({ name: 'probe', version: '1.0.0', apply: ({ services }) => void (seen = services) });
  const server = createServer({ name: 's', version: '1', logger: quiet(), plugins: [probe], ...options });
  if (seen === undefined) throw new Error('apply() did not run');
  return { services: seen, server };
}

describe("a server's services", () => {
  it('are the logger, clock and store it was built with, and the same ones from its container', () => {
    const store = new MemoryStore();
    const logger = quiet();
    const server = createServer({ name: 's', version: '1', logger, store });
    const { services } = server;
    expect(services.logger).toBe(logger);
    expect(services.clock).toBe(systemClock);
    expect(services.store).toBe(store);
    const { redactions, audit } = services;
    expect(server.container.resolve(Tokens.Logger)).toBe(logger);
    expect(server.container.resolve(Tokens.Clock)).toBe(systemClock);
    expect(server.container.resolve(Tokens.Store)).toBe(store);
    expect(server.container.resolve(Tokens.Redactions)).toBe(redactions);
    expect(server.container.resolve(Tokens.Audit)).toBe(audit);
    // Read again once the container exists: still the same objects.
    expect(services.store).toBe(store);
    expect(services.audit).toBe(audit);
  });

  it('have one container per server, the same on every read, from the server and from its plugins', () => {
    const a = servicesOf();
    const b = servicesOf();
    expect(a.services.container).toBe(a.server.container);
    expect(a.server.container).toBe(a.server.container);
    expect(a.server.container).not.toBe(b.server.container);
  });

  it('take a service registered over a core token in the container, as they always did', () => {
    const { services } = servicesOf();
    const replacement = new MemoryStore();
    services.container.register(Tokens.Store, { useValue: replacement });
    expect(services.store).toBe(replacement);
  });

  it('cannot be reassigned by a plugin', () => {
    const { services } = servicesOf();
    expect(() => Object.assign(services, { store: new MemoryStore() })).toThrow(TypeError);
    expect(() => Object.assign(services, { extra: 1 })).toThrow(TypeError);
  });

  it('resolve a class the program marks @injectable() with its own tsyringe, core services injected', () => {
    class Forecasts {
      constructor(readonly store: Store) {}
    }
    inject(Tokens.Store)(Forecasts, undefined, 0);
    injectable()(Forecasts);
    const { services, server } = servicesOf();
    const resolved = server.container.resolve(Forecasts);
    expect(resolved).toBeInstanceOf(Forecasts);
    expect(resolved.store).toBe(services.store);
  });
});

describe('services.audit in a program that does not import @sluice/audit', () => {
  it('records nothing, says so once naming the import, and is the same object from the container', async () => {
    const logs = captureLogger();
    const server = createServer({ name: 's', version: '1', logger: logs.logger });
    const { audit } = server.services;
    expect(audit.enabled).toBe(false);
    expect(await audit.append({ kind: 'ledger.held', tool: 't' })).toBeUndefined();
    expect(await audit.append({ kind: 'ledger.held', tool: 't' })).toBeUndefined();
    const said = logs.records.filter((r) => r.event === 'audit.unavailable');
    expect(said).toHaveLength(1);
    expect(said[0]?.msg).toContain("import '@sluice/audit'");
    expect(server.container.resolve(Tokens.Audit)).toBe(audit);
    await server.close();
  });

  it('refuses audit options at createServer with INVALID_STATE naming the import, rather than record nothing', () => {
    const error = (() => {
      try {
        createServer({ name: 's', version: '1', audit: { maxEntries: 10 } });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(SluiceError.is(error) && error.code).toBe(CoreErrorCode.INVALID_STATE);
    expect((error as Error).message).toContain("import '@sluice/audit'");
  });
});

describe('an adopted server in a program that never asks for a container', () => {
  it('loads neither tsyringe nor the reflect-metadata polyfill; the first read of container loads the copy the program imports', () => {
    const run = spawnSync(
      process.execPath,
      [
        '--conditions=sluice:source',
        '--import',
        'tsx',
        fileURLToPath(new URL('./fixtures/container-on-demand.ts', import.meta.url)),
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      listed: ['forecast'],
      refused: 'NO_SUCH_CITY',
      before: [],
      after: true,
      sameContainer: true,
      injectedStore: true,
    });
  });
});
