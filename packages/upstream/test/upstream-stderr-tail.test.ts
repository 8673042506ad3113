import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { STDERR_LINE_CHARS, STDERR_TAIL_LINES, StderrTail } from '../src/stderr-tail.js';
import { STDIO_UPSTREAM, call, connectClient, eventually } from '../../core/test/fixtures/upstream-helpers.js';
import '../src/index.js'; // gives every server import()

const scratch = mkdtempSync(join(tmpdir(), 'sluice-stderr-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the stderr tail', () => {
  it('keeps the last lines, joining a line split across chunks', () => {
    const tail = new StderrTail();
    tail.push('first\nsec');
    tail.push('ond\n\n');
    tail.push('third (unfinished)');
    expect(tail.take()).toEqual(['first', 'second', 'third (unfinished)']);
    expect(tail.take()).toEqual([]);
  });

  it('keeps at most its line count, each line cut to its length', () => {
    const tail = new StderrTail();
    for (let i = 0; i < STDERR_TAIL_LINES + 5; i++) tail.push(`line ${i} ${'x'.repeat(STDERR_LINE_CHARS * 2)}\n`);
    const lines = tail.take();
    expect(lines).toHaveLength(STDERR_TAIL_LINES);
    expect(lines[0]).toMatch(/^line 5 /);
    expect(lines.every((line) => line.length <= STDERR_LINE_CHARS + 1)).toBe(true);
  });

  it('bounds an endless line without a newline', () => {
    const tail = new StderrTail();
    for (let i = 0; i < 100; i++) tail.push('y'.repeat(10_000));
    expect(tail.take()[0]?.length).toBeLessThanOrEqual(STDERR_LINE_CHARS + 1);
  });
});

describe('an upstream that fails', () => {
  it('logs its last stderr lines at warn', async () => {
    const logs = captureLogger();
    const server = createServer({ name: 'gateway', version: '1.0.0', logger: logs.logger });
    const marker = join(scratch, 'started-once');
    await server.import({
      name: 'once',
      connection: {
        type: 'stdio',
        command: process.execPath,
        args: [STDIO_UPSTREAM],
        env: { FIXTURE_START_ONCE: marker },
      },
      retry: { initialDelayMs: 20, maxDelayMs: 100 },
    });
    const { client } = await connectClient(server);
    process.kill(Number(textOf(await call(client, 'pid'))), 'SIGKILL');
    await eventually(
      () => logs.events('upstream.stderr_tail').some((r) => JSON.stringify(r.lines).includes('refuses to start again')),
      'the failed restart to be reported with its stderr',
    );
    const reports = logs.events('upstream.stderr_tail');
    expect(reports[0]).toMatchObject({ level: 40, upstream: 'once' });
    expect(reports[0]?.lines).toContain('fixture upstream ready');
    await client.close();
    await server.close();
  });
});
