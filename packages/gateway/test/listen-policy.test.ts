// Issue 29, what was left: a 2026-07-28 `subscriptions/listen` filter names resources by URI, and the gateway
// relays every change of a resource its upstream reports to each listener whose filter names it. Attacked from
// outside: a real `sluice serve` over loopback HTTP, an upstream that serves any file through `file:///{+path}`
// and reports changes of any URI (its `touch` tool), denyResources and a per-caller authz policy. A 2025-11-25
// client's `resources/subscribe` meets both; a 2026-07-28 client's listen filter must meet the same.
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, rpcFailure, runCli, tempConfig } from './helpers.js';

const FILE_UPSTREAM = fileURLToPath(new URL('./fixtures/file-upstream.mjs', import.meta.url));
const KEY = 'listen-policy-key-0123456789';

async function clientOf(url: URL, version: '2025-11-25' | '2026-07-28', key: string): Promise<Client> {
  const client = new Client(
    { name: 'listen-attacker', version: '1.0.0' },
    version === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

/** The URIs of the `notifications/resources/updated` a client received, in order. */
function updatesOf(client: Client): string[] {
  const seen: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => void seen.push(n.params.uri));
  return seen;
}

/** Starts `sluice serve` with the upstream, its deny list and the authz policy (`hidden` as given). */
async function serve(hidden?: 'not_found' | 'forbidden'): Promise<{ url: URL; stop: () => Promise<void> }> {
  const file = tempConfig({
    listen: {
      http: {
        host: '127.0.0.1',
        port: 0,
        auth: {
          type: 'apiKeys',
          keys: [
            { name: 'admin', key: `${KEY}-admin`, scopes: ['admin'] },
            { name: 'reader', key: `${KEY}-reader`, scopes: ['read'] },
          ],
        },
      },
    },
    upstreams: [
      {
        name: 'fs',
        namespace: 'fs',
        connection: { type: 'stdio', command: process.execPath, args: [FILE_UPSTREAM] },
        denyResources: ['file:///secret/*'],
      },
    ],
    plugins: {
      authz: {
        ...(hidden === undefined ? {} : { hidden }),
        rules: [
          { when: { scopes: ['admin'] }, upstreams: ['fs'] },
          { when: { scopes: ['read'] }, resources: ['file:///public/*'] },
        ],
      },
    },
  });
  const run = runCli(['serve', '--config', file.file]);
  const url = new URL((await run.event('http.listening')).url as string);
  return {
    url,
    stop: async () => {
      run.child.kill('SIGTERM');
      await run.exited;
      file.remove();
    },
  };
}

/** What a client gets for a URI that names no resource. */
const badUri = { code: -32602, message: 'A resource URI holds no spaces, control characters or backslashes' };

/**
 * What a reader is answered for a URI it is not granted and for a malformed one: subscribe, read (2025-11-25),
 * listen and read (2026-07-28).
 */
async function refusalsOf(legacy: Client, modern: Client): Promise<unknown[]> {
  return [
    await rpcFailure(legacy.subscribeResource({ uri: 'file:///etc/passwd' })),
    await rpcFailure(legacy.readResource({ uri: 'file:///etc/passwd' })),
    await rpcFailure(legacy.subscribeResource({ uri: 'no scheme at all' })),
    await rpcFailure(modern.listen({ resourceSubscriptions: ['file:///etc/passwd'] })),
    await rpcFailure(modern.listen({ resourceSubscriptions: ['no scheme at all'] })),
    await rpcFailure(modern.readResource({ uri: 'file:///etc/passwd' })),
  ];
}

/** What a client gets for a resource that does not exist. */
const resourceNotFound = (uri: string) => ({ code: -32602, message: `Resource not found: ${uri}`, data: { uri } });

describe('2026-07-28 listen filters meet denyResources and authz, as 2025-11-25 subscriptions do', () => {
  let url: URL;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ url, stop } = await serve());
  }, 60_000);
  afterAll(() => stop());

  it('2025-11-25: subscribing to a denied or ungranted URI is refused', async () => {
    const reader = await clientOf(url, '2025-11-25', `${KEY}-reader`);
    try {
      await expect(reader.subscribeResource({ uri: 'file:///secret/key' })).rejects.toThrow(/not found/i);
      // Not granted: hidden, as a URI that does not exist is.
      expect(await rpcFailure(reader.subscribeResource({ uri: 'file:///etc/passwd' }))).toEqual(
        resourceNotFound('file:///etc/passwd'),
      );
      await reader.subscribeResource({ uri: 'file:///public/readme' });
    } finally {
      await reader.close();
    }
  });

  it('2026-07-28: a listen filter naming a denied URI, in any spelling, is refused as the subscription is', async () => {
    const admin = await clientOf(url, '2026-07-28', `${KEY}-admin`);
    try {
      for (const uri of ['file:///secret/key', 'FILE://localhost/secret/./key', 'file:///%73ecret//key'])
        await expect(admin.listen({ resourceSubscriptions: ['file:///public/readme', uri] }), uri).rejects.toThrow(
          /not found/i,
        );
    } finally {
      await admin.close();
    }
  });

  it('2026-07-28: a listen filter naming a URI the caller is not granted is answered as one naming a missing URI', async () => {
    const reader = await clientOf(url, '2026-07-28', `${KEY}-reader`);
    try {
      expect(await rpcFailure(reader.listen({ resourceSubscriptions: ['file:///etc/passwd'] }))).toEqual(
        resourceNotFound('file:///etc/passwd'),
      );
      expect(
        await rpcFailure(
          reader.listen({ resourceSubscriptions: ['file:///public/readme', 'file:///public/../etc/passwd'] }),
        ),
      ).toEqual(resourceNotFound('file:///etc/passwd'));
    } finally {
      await reader.close();
    }
  });

  it('refusals reach the SDK client with the JSON-RPC code, message and data of a missing resource', async () => {
    const legacy = await clientOf(url, '2025-11-25', `${KEY}-reader`);
    const modern = await clientOf(url, '2026-07-28', `${KEY}-reader`);
    try {
      expect(await refusalsOf(legacy, modern)).toEqual([
        resourceNotFound('file:///etc/passwd'),
        resourceNotFound('file:///etc/passwd'),
        { ...badUri, data: undefined },
        resourceNotFound('file:///etc/passwd'),
        { ...badUri, data: undefined },
        resourceNotFound('file:///etc/passwd'),
      ]);
    } finally {
      await Promise.all([legacy.close(), modern.close()]);
    }
  });

  it('2026-07-28: an attacker hears no change of what it may not read; a granted listener hears its own', async () => {
    const reader = await clientOf(url, '2026-07-28', `${KEY}-reader`);
    const admin = await clientOf(url, '2026-07-28', `${KEY}-admin`);
    try {
      const readerHeard = updatesOf(reader);
      // Whatever the gateway answers to these filters, the reader must hear of no change to these URIs.
      // The granted one in another spelling: the filter is kept in the canonical one, which notifications name.
      const attempts = [['file:///secret/key'], ['file:///etc/passwd'], ['FILE://localhost/public/./readme']];
      const opened = await Promise.all(
        attempts.map((uris) => reader.listen({ resourceSubscriptions: uris }).catch(() => undefined)),
      );
      // Only the granted filter is served.
      expect(opened.map((s) => s !== undefined)).toEqual([false, false, true]);
      // The upstream reports the forbidden ones first, then the granted one: once that arrives, any earlier is in.
      await call(admin, 'fs_touch', { uris: ['file:///secret/key', 'file:///etc/passwd', 'file:///public/readme'] });
      await eventually(() => readerHeard.includes('file:///public/readme'), 'the granted change to arrive');
      expect(readerHeard).toEqual(['file:///public/readme']);
      await Promise.all(opened.flatMap((s) => (s === undefined ? [] : [s.close()])));
    } finally {
      await reader.close();
      await admin.close();
    }
  });
});

describe("with hidden: 'forbidden', a listen filter and a subscription are refused with FORBIDDEN", () => {
  let url: URL;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ url, stop } = await serve('forbidden'));
  }, 60_000);
  afterAll(() => stop());

  it('refuses an ungranted subscription and listen filter with FORBIDDEN, in any spelling', async () => {
    const legacy = await clientOf(url, '2025-11-25', `${KEY}-reader`);
    const modern = await clientOf(url, '2026-07-28', `${KEY}-reader`);
    try {
      await expect(legacy.subscribeResource({ uri: 'file:///etc/passwd' })).rejects.toThrow(/FORBIDDEN/);
      await expect(modern.listen({ resourceSubscriptions: ['file:///etc/passwd'] })).rejects.toThrow(/FORBIDDEN/);
      await expect(
        modern.listen({ resourceSubscriptions: ['file:///public/readme', 'file:///public/../etc/passwd'] }),
      ).rejects.toThrow(/FORBIDDEN/);
    } finally {
      await Promise.all([legacy.close(), modern.close()]);
    }
  });

  it('refusals reach the SDK client with the JSON-RPC code, message and data they always had', async () => {
    const legacy = await clientOf(url, '2025-11-25', `${KEY}-reader`);
    const modern = await clientOf(url, '2026-07-28', `${KEY}-reader`);
    try {
      const forbidden = (kind: string) => {
        const message = `The ${kind} of "file:///etc/passwd" is not available to "reader".`;
        return {
          code: -32600,
          message: `FORBIDDEN: ${message}`,
          data: { code: 'FORBIDDEN', message, plugin: 'authz' },
        };
      };
      expect(await refusalsOf(legacy, modern)).toEqual([
        forbidden('resources/subscribe'),
        forbidden('resources/read'),
        { ...badUri, data: undefined },
        forbidden('resources/subscribe'),
        { ...badUri, data: undefined },
        forbidden('resources/read'),
      ]);
    } finally {
      await Promise.all([legacy.close(), modern.close()]);
    }
  });
});
