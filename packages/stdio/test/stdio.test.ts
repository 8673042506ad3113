import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { textOf } from '@sluice/testing';

const ERAS = [
  { label: '2025-11-25', mode: 'legacy' as const },
  { label: '2026-07-28', mode: { pin: '2026-07-28' } },
];
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('stdio in a child process', () => {
  const fixture = fileURLToPath(new URL('./fixtures/stdio-server.ts', import.meta.url));
  for (const era of ERAS) {
    it(`serves ${era.label} with only protocol messages on stdout`, async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ['--conditions=sluice:source', '--import', 'tsx', fixture],
        cwd: ROOT,
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const client = new Client({ name: 'c', version: '1' }, { versionNegotiation: { mode: era.mode } });
      await client.connect(transport);
      expect(client.getNegotiatedProtocolVersion()).toBe(era.label);
      const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      expect(textOf(result)).toBe('5');
      expect(result._meta).toMatchObject({ stamped: true });
      await client.close();
      // The log line went to stderr; had it gone to stdout, the client would have failed to parse it.
      expect(stderr).toContain('fixture.start');
    });
  }
});

describe('without @sluice/stdio', () => {
  it('serveStdio() refuses with INVALID_STATE, naming the package to import', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/no-stdio-import.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=sluice:source', '--import', 'tsx', fixture],
      { cwd: ROOT },
    );
    const answer = JSON.parse(stdout) as { code: string; message: string };
    expect(answer.code).toBe('INVALID_STATE');
    expect(answer.message).toContain("import '@sluice/stdio'");
  });
});
