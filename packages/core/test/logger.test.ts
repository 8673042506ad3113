import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LOG_LINE_CHARS, createJsonLogger } from '../src/logger.js';
import type { Logger } from '../src/logger.js';

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function captured(level?: string): { logger: Logger; lines: string[]; records: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const logger = createJsonLogger({ level, bindings: { name: 'test' }, write: (line) => lines.push(line) });
  return { logger, lines, records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('the built-in JSON logger', () => {
  it("writes pino's record shape: numeric level, time, name, bindings, fields and msg", () => {
    const { logger, records } = captured();
    logger.child({ plugin: 'p' }).warn({ event: 'e', n: 1 }, 'careful');
    logger.info('plain');
    const [first, second] = records();
    expect(first).toMatchObject({ level: 40, name: 'test', plugin: 'p', event: 'e', n: 1, msg: 'careful' });
    expect(typeof first!.time).toBe('number');
    expect(first!.pid).toBe(process.pid);
    expect(second).toMatchObject({ level: 30, msg: 'plain' });
  });

  it('writes from its level up, and the level can change', () => {
    const { logger, records } = captured('warn');
    logger.info('dropped');
    logger.error('kept');
    expect(logger.isLevelEnabled('info')).toBe(false);
    logger.level = 'debug';
    logger.debug('now kept');
    expect(records().map((r) => r.msg)).toEqual(['kept', 'now kept']);
    expect(() => (logger.level = 'loud')).toThrow(/Unknown log level "loud"/);
    logger.level = 'silent';
    logger.fatal('nothing');
    expect(records()).toHaveLength(2);
  });

  it('serializes errors, bigints and cycles, as pino would read them', () => {
    const { logger, records } = captured();
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    logger.error({ err: new TypeError('bad'), big: 10n, cycle }, 'failed');
    logger.error(new RangeError('alone'));
    const [first, second] = records();
    expect(first!.err).toMatchObject({ type: 'TypeError', message: 'bad' });
    expect(first!.big).toBe('10');
    expect(first!.cycle).toEqual({ a: 1, self: '[Circular]' });
    expect(second).toMatchObject({ err: { type: 'RangeError', message: 'alone' }, msg: 'alone' });
  });

  it('keeps every line one bounded JSON object, whatever it is handed', () => {
    fc.assert(
      fc.property(fc.object({ withBigInt: true, withNullPrototype: true }), fc.string(), (fields, message) => {
        const { logger, lines } = captured('trace');
        logger.info(fields, message);
        expect(lines).toHaveLength(1);
        expect(lines[0]!.endsWith('\n')).toBe(true);
        expect(lines[0]!.slice(0, -1)).not.toContain('\n');
        expect(typeof JSON.parse(lines[0]!)).toBe('object');
      }),
    );
    const { logger, records } = captured();
    logger.info({ blob: 'x'.repeat(MAX_LOG_LINE_CHARS) }, 'big');
    const [record] = records();
    expect(record).toMatchObject({ msg: 'big', name: 'test' });
    expect(record!.blob).toBeUndefined();
    expect(record!.truncated).toBeGreaterThan(MAX_LOG_LINE_CHARS);
  });

  it('is the default: a server given no logger writes JSON to stderr, nothing to stdout, and never loads pino', () => {
    const program = `
      import { createServer } from '@sluice/core';
      import { createRequire } from 'node:module';
      const server = createServer({ name: 'quiet', version: '1' });
      server.logger.info({ event: 'hello' }, 'from the default logger');
      await server.close();
      const require = createRequire(import.meta.url);
      const pino = Object.keys(require.cache).filter((path) => /[\\\\/]pino[\\\\/]/.test(path));
      process.stderr.write('pino modules: ' + pino.length + '\\n');
    `;
    const run = spawnSync(
      process.execPath,
      ['--conditions=sluice:source', '--import', 'tsx', '--input-type=module', '-e', program],
      { cwd: PACKAGE, encoding: 'utf8', env: { ...process.env, SLUICE_LOG_LEVEL: 'info' } },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    const hello = lines.map((line) => (line.startsWith('{') ? (JSON.parse(line) as Record<string, unknown>) : {}));
    expect(hello).toContainEqual(
      expect.objectContaining({ level: 30, name: 'quiet', event: 'hello', msg: 'from the default logger' }),
    );
    expect(lines).toContain('pino modules: 0');
  });
});
