// Egress in front of the reference filesystem server, as an operator meets it: `read_text_file` has an output
// schema and returns a file's text twice (a text block and structuredContent.content). The guard counts that text
// once, cuts a large file instead of refusing it, and a file past the read cap is a refusal naming the setting,
// which the risk plugin logs as a refusal, not as a crashed call.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, httpClient, serve } from './helpers.js';
import type { Served } from './helpers.js';

const LIMIT = 65_536;
// The package has no main entry; its bin is dist/index.js beside its package.json.
const FILESYSTEM_SERVER = join(
  dirname(fileURLToPath(import.meta.resolve('@modelcontextprotocol/server-filesystem/package.json'))),
  'dist/index.js',
);
const line = 'a line of the file, as a log or a source file would hold it\n';
const fileOf = (bytes: number): string => line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);

let folder: string;
let gateway: Served;
let client: Client;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'sluice-files-'));
  for (const [name, bytes] of [
    ['40k.txt', 40_000],
    ['100k.txt', 100_000],
    ['266k.txt', 266_000],
  ] as const)
    writeFileSync(join(folder, name), fileOf(bytes));
  gateway = await serve({
    listen: { http: { port: 0 } },
    upstreams: [
      {
        name: 'files',
        namespace: 'files',
        connection: { type: 'stdio', command: process.execPath, args: [FILESYSTEM_SERVER, folder] },
      },
    ],
    plugins: { egress: { maxPayloadBytes: LIMIT }, risk: { calls: { events: 'upstream' } } },
  });
  client = await httpClient(gateway.url);
}, 60_000);

afterAll(async () => {
  await client.close();
  await gateway.stop();
  rmSync(folder, { recursive: true, force: true });
});

const read = (name: string): Promise<CallToolResult> =>
  call(client, 'files_read_text_file', { path: join(folder, name) });
const egressRecord = (result: CallToolResult) =>
  result._meta?.['dev.sluice/egress'] as { originalBytes: number; keptBytes: number; limitBytes: number } | undefined;
const textOf = (result: CallToolResult): string =>
  result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

describe('read_text_file of the reference filesystem server behind maxPayloadBytes 65536', () => {
  it('passes a 40 KB file whole: its text counts once, though the server sends it twice', async () => {
    const result = await read('40k.txt');
    expect(result.isError).toBeFalsy();
    expect(egressRecord(result)).toBeUndefined();
    expect((result.structuredContent as { content: string }).content).toBe(fileOf(40_000));
  });

  it('cuts a 100 KB file and reports its size as the file, not twice the file', async () => {
    const result = await read('100k.txt');
    expect(result.isError).toBeFalsy();
    const record = egressRecord(result);
    expect(record?.limitBytes).toBe(LIMIT);
    expect(record?.originalBytes).toBeGreaterThanOrEqual(100_000);
    expect(record?.originalBytes).toBeLessThan(101_000);
    expect(fileOf(100_000).startsWith((result.structuredContent as { content: string }).content)).toBe(true);
  });

  it('refuses a 266 KB file at the read cap naming maxPayloadBytes, and the risk plugin logs a refusal', async () => {
    const result = await read('266k.txt');
    expect(result.isError).toBe(true);
    const error = result._meta?.['dev.sluice/error'] as { code: string; readLimitBytes: number };
    expect(error.code).toBe('UPSTREAM_RESPONSE_TOO_LARGE');
    expect(error.readLimitBytes).toBe(4 * LIMIT);
    expect(textOf(result)).toContain(`4 × its maxPayloadBytes of ${LIMIT}`);
    const records = (): Record<string, unknown>[] =>
      gateway.run
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await eventually(
      () => records().some((r) => r.event === 'tool.done' && r.outcome === 'refused'),
      'tool.done for the refused read',
    );
    expect(records().filter((r) => r.event === 'tool.crash')).toEqual([]);
  });
});
