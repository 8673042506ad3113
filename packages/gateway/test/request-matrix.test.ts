// Issue 29, every request kind against every guard through one path: a real `sluice serve` over loopback HTTP,
// clients of both protocol versions with API keys, an upstream that serves any file through `file:///{+path}`,
// `denyResources`, a per-caller authz policy and the concurrency plugin's rate (the same admission mechanism for
// every kind). Each kind is tried as an attacker would: ungranted (hidden, as if it did not exist; a setLevel, which
// names nothing, refused), denied in another spelling, then past its rate.
// A refused request (authz, deny) must not use up the caller's budget: the budget counts admitted requests only.
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, runCli, tempConfig } from './helpers.js';

const FILE_UPSTREAM = fileURLToPath(new URL('./fixtures/file-upstream.mjs', import.meta.url));
const KEY = 'request-matrix-key-0123456789';
const VERSIONS = ['2025-11-25', '2026-07-28'] as const;
type Version = (typeof VERSIONS)[number];
/** Admitted requests of one kind (and upstream), or of one tool, in the rate's window (a day: it never ends here). */
const RATE = 3;

async function clientOf(url: URL, version: Version, key: string): Promise<Client> {
  const client = new Client(
    { name: 'matrix-attacker', version: '1.0.0' },
    version === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

/** What became of a request: `ok`, or the error (or refusal) text the client got. */
async function outcome(request: Promise<unknown>): Promise<string> {
  try {
    const answer = (await request) as { isError?: boolean; content?: { text?: string }[] };
    return answer.isError === true ? JSON.stringify(answer.content) : 'ok';
  } catch (error) {
    return String(error);
  }
}

/** Runs `request` until one is not admitted: the outcomes of RATE + 1 tries. */
async function pastTheRate(request: () => Promise<unknown>): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i <= RATE; i++) outcomes.push(await outcome(request()));
  return outcomes;
}

function expectRateCut(outcomes: string[]): void {
  expect(outcomes.slice(0, RATE)).toEqual(Array.from({ length: RATE }, () => 'ok'));
  expect(outcomes[RATE]).toContain('RATE_LIMITED');
}

for (const version of VERSIONS) {
  describe(`every request kind meets authz, denyResources and the rate through one path (${version})`, () => {
    let url: URL;
    let stop: () => Promise<void>;
    let reader: Client;
    let nobody: Client;
    beforeAll(async () => {
      const file = tempConfig({
        listen: {
          http: {
            host: '127.0.0.1',
            port: 0,
            auth: {
              type: 'apiKeys',
              keys: [
                { name: 'reader', key: `${KEY}-reader`, scopes: ['read'] },
                { name: 'nobody', key: `${KEY}-nobody` },
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
          // The secret files are granted: what refuses them is the deny list, which no grant opens.
          authz: {
            rules: [
              {
                when: { scopes: ['read'] },
                allow: ['fs_echo'],
                resources: ['file:///public/*', 'file:///secret/*'],
                prompts: ['fs_greet'],
              },
            ],
          },
          concurrency: { default: { maxActive: 8, maxQueue: 8, rate: { calls: RATE, perMs: 86_400_000 } } },
        },
      });
      const run = runCli(['serve', '--config', file.file]);
      url = new URL((await run.event('http.listening')).url as string);
      stop = async () => {
        run.child.kill('SIGTERM');
        await run.exited;
        file.remove();
      };
      reader = await clientOf(url, version, `${KEY}-reader`);
      nobody = await clientOf(url, version, `${KEY}-nobody`);
    }, 60_000);
    afterAll(async () => {
      await reader.close();
      await nobody.close();
      await stop();
    });

    it('tools/call: an ungranted caller is refused, and past the rate a call is RATE_LIMITED', async () => {
      expect(await outcome(call(nobody, 'fs_echo', { text: 'x' }))).toContain('Unknown tool: "fs_echo"');
      expectRateCut(await pastTheRate(() => call(reader, 'fs_echo', { text: 'x' })));
    });

    it('resources/read: ungranted, denied in any spelling, then past the rate', async () => {
      expect(await outcome(nobody.readResource({ uri: 'file:///public/readme' }))).toContain(
        'Resource not found: file:///public/readme',
      );
      expect(await outcome(reader.readResource({ uri: 'file:///etc/passwd' }))).toContain(
        'Resource not found: file:///etc/passwd',
      );
      for (const uri of ['file:///secret/key', 'FILE://localhost/%73ecret/./key', 'file:///public/../secret//key'])
        expect(await outcome(reader.readResource({ uri })), uri).toMatch(/not found/i);
      expectRateCut(await pastTheRate(() => reader.readResource({ uri: 'file:///public/readme' })));
    });

    it('prompts/get: an ungranted caller is refused, and past the rate a get is RATE_LIMITED', async () => {
      expect(await outcome(nobody.getPrompt({ name: 'fs_greet', arguments: { who: 'x' } }))).toContain(
        'Prompt "fs_greet" not found',
      );
      expectRateCut(await pastTheRate(() => reader.getPrompt({ name: 'fs_greet', arguments: { who: 'x' } })));
    });

    it('completion/complete: ungranted, denied, then past the rate', async () => {
      const complete = (
        client: Client,
        ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string },
      ) => client.complete({ ref, argument: { name: ref.type === 'ref/prompt' ? 'who' : 'path', value: '' } });
      expect(await outcome(complete(nobody, { type: 'ref/prompt', name: 'fs_greet' }))).toContain(
        'Prompt "fs_greet" not found',
      );
      expect(await outcome(complete(reader, { type: 'ref/resource', uri: 'file:///%73ecret/key' }))).toMatch(
        /not found/i,
      );
      expectRateCut(await pastTheRate(() => complete(reader, { type: 'ref/prompt', name: 'fs_greet' })));
    });

    it(
      version === '2025-11-25'
        ? 'resources/subscribe: ungranted, denied, then past the rate'
        : 'subscriptions/listen filters: ungranted, denied, then past the rate',
      async () => {
        const opened: { close(): Promise<void> }[] = [];
        const subscribe = async (client: Client, uri: string): Promise<unknown> => {
          if (version === '2025-11-25') return client.subscribeResource({ uri });
          opened.push(await client.listen({ resourceSubscriptions: [uri] }));
          return {};
        };
        try {
          expect(await outcome(subscribe(nobody, 'file:///public/readme'))).toContain(
            'Resource not found: file:///public/readme',
          );
          expect(await outcome(subscribe(reader, 'file:///etc/passwd'))).toContain(
            'Resource not found: file:///etc/passwd',
          );
          expect(await outcome(subscribe(reader, 'FILE:///secret/./key'))).toMatch(/not found/i);
          expectRateCut(await pastTheRate(() => subscribe(reader, 'file:///public/readme')));
        } finally {
          await Promise.all(opened.map((s) => s.close()));
        }
      },
    );

    // 2025-11-25 only: a 2026-07-28 request carries its log level in its own `_meta`.
    if (version === '2025-11-25')
      it('logging/setLevel: an ungranted caller is refused, and past the rate a setLevel is RATE_LIMITED', async () => {
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test drives
        expect(await outcome(nobody.setLoggingLevel('debug'))).toContain('FORBIDDEN');
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- as above
        expectRateCut(await pastTheRate(() => reader.setLoggingLevel('error')));
      });
  });
}
