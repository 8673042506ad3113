import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createGatewayLogger, prettyLine } from '@sluice/gateway';
import { fixtureUpstream, runCli, tempConfig } from './helpers.js';

function captured(isTTY: boolean): { stream: PassThrough & { isTTY: boolean }; text: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY });
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('a readable log line', () => {
  it('shows time, level, message, then the other fields as key=value', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 40,
        time: Date.UTC(2026, 0, 1, 12, 30, 5, 7),
        msg: 'upstream "a" is down',
        upstream: 'a',
        n: 2,
      }),
      false,
    );
    expect(line).toBe('12:30:05.007 WARN  upstream "a" is down upstream=a n=2\n');
  });

  it('replaces terminal control characters from upstream text, and cuts long fields', () => {
    const line = prettyLine(JSON.stringify({ level: 30, msg: 'hi\u001b[2Jthere', text: 'x'.repeat(1_000) }), true);
    expect(line).not.toContain('\u001b[2J');
    expect(line).toContain('hi\ufffd[2Jthere');
    expect(line.length).toBeLessThan(400);
  });

  it('passes through a line that is not JSON', () => {
    expect(prettyLine('plain words', false)).toBe('plain words\n');
  });
});

describe('the gateway logger', () => {
  it('writes readable, coloured lines to a terminal and JSON lines elsewhere when the format is auto', async () => {
    const tty = captured(true);
    createGatewayLogger({ name: 'gw', level: 'info', format: 'auto', stream: tty.stream }).info(
      { event: 'x' },
      'hello',
    );
    const pipe = captured(false);
    createGatewayLogger({ name: 'gw', level: 'info', format: 'auto', stream: pipe.stream }).info(
      { event: 'x' },
      'hello',
    );
    await flush();
    expect(tty.text()).toContain('\u001b[32mINFO \u001b[0m hello');
    expect(JSON.parse(pipe.text())).toMatchObject({ msg: 'hello', event: 'x', level: 30 });
  });

  it('honours an explicit format and level', async () => {
    const out = captured(false);
    const logger = createGatewayLogger({ name: 'gw', level: 'warn', format: 'pretty', stream: out.stream });
    logger.info('not shown');
    logger.warn('shown');
    await flush();
    expect(out.text()).toMatch(/WARN {2}shown\n$/);
    expect(out.text()).not.toContain('not shown');
  });
});

/** A stdio upstream that writes a line to stderr and exits before it answers anything. */
const BROKEN_UPSTREAM = 'process.stderr.write("broken on purpose\\n"); process.exit(3)';

describe('sluice serve logging', () => {
  const config = () =>
    tempConfig({
      listen: { http: { port: 0 } },
      upstreams: [fixtureUpstream('shop'), fixtureUpstream('desk')],
      plugins: { risk: { ledger: { persist: 'memory' } } },
    });

  it('says one start-up summary at info instead of a line per tool', async () => {
    const file = config();
    const run = runCli(['serve', '--config', file.file, '--log-format', 'json']);
    try {
      const ready = await run.event('gateway.ready');
      expect(ready).toMatchObject({
        level: 30,
        tools: 14,
        upstreams: [
          { name: 'shop', health: 'healthy', exposed: 7, skipped: 0 },
          { name: 'desk', health: 'healthy', exposed: 7, skipped: 0 },
        ],
        plugins: ['request-filter', 'risk', 'gateway-telemetry'],
      });
      expect(String(ready.msg)).toMatch(
        /upstream\s+transport\s+health\s+exposed\s+skipped\n\s+shop\s+stdio\s+healthy\s+7\s+0/,
      );
      const lines = run.stderr().trim().split('\n');
      const perTool = lines.filter((line) => /"tool":"(shop|desk)_/.test(line));
      expect(perTool).toEqual([]);
      expect(lines.length).toBeLessThan(10);
    } finally {
      run.child.kill('SIGKILL');
      file.remove();
    }
  });

  it('writes readable lines with --log-format pretty, and only warnings with --log-level warn', async () => {
    const file = config();
    // An upstream that fails at once says a warning while the quiet gateway starts.
    const broken = tempConfig({
      listen: { http: { port: 0 } },
      upstreams: [
        fixtureUpstream('desk'),
        fixtureUpstream('broken', {
          connection: { type: 'stdio', command: process.execPath, args: ['-e', BROKEN_UPSTREAM] },
        }),
      ],
    });
    const pretty = runCli(['serve', '--config', file.file, '--log-format', 'pretty']);
    const quiet = runCli(['serve', '--config', broken.file, '--log-format', 'json', '--log-level', 'warn']);
    try {
      await expect
        .poll(() => pretty.stderr(), { timeout: 15_000 })
        .toMatch(/INFO {2}gateway ready at http:\/\/127\.0\.0\.1:\d+\/mcp/);
      expect(pretty.stderr()).toMatch(/^\s+desk\s+stdio\s+healthy\s+7\s+0$/m);
      expect(
        pretty
          .stderr()
          .split('\n')
          .some((line) => line.startsWith('{')),
      ).toBe(false);
      await expect.poll(() => quiet.stderr(), { timeout: 15_000 }).toContain('broken on purpose');
      expect(quiet.stderr()).toContain('"level":40');
      quiet.child.kill('SIGTERM');
      expect(await quiet.exited).toBe(0);
      expect(quiet.stderr()).not.toContain('"level":30');
    } finally {
      pretty.child.kill('SIGKILL');
      quiet.child.kill('SIGKILL');
      file.remove();
      broken.remove();
    }
  });

  it('refuses an unknown --log-format with exit code 2', async () => {
    const run = runCli(['serve', '--log-format', 'xml']);
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toContain('--log-format takes auto, json, pretty');
  });
});

describe('a readable line with a long structured field', () => {
  it('never ends in a cut JSON array: the field shows its size, the JSON format keeps it whole', () => {
    const upstreams = Array.from({ length: 8 }, (_, i) => ({
      name: `upstream-${i}`,
      transport: 'stdio',
      health: 'healthy',
    }));
    const line = prettyLine(
      JSON.stringify({ level: 30, time: 0, msg: 'gateway ready', event: 'gateway.ready', upstreams, tools: 3 }),
      false,
    );
    expect(line).toContain('upstreams=[8 items]');
    expect(line).toContain('tools=3');
    expect(line).not.toContain('…');
    // A short one is still shown whole.
    expect(prettyLine(JSON.stringify({ level: 30, time: 0, msg: 'm', plugins: ['risk'] }), false)).toContain(
      'plugins=["risk"]',
    );
  });
});
