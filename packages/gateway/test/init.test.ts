// `sluice init`, and what a first run without a config says.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '@sluice/core';
import { interpolateEnv, parseGatewayConfig } from '@sluice/gateway';
import { guessableKeys } from '@sluice/http';
import { runMain, tempConfig } from './helpers.js';

describe('sluice init', () => {
  it('writes a starter config with $schema, a loopback bind and an API key from the environment, that check accepts', async () => {
    const folder = tempConfig('{}', 'unused.json');
    try {
      const file = join(folder.dir, 'sluice.config.json');
      const init = await runMain(['init', '--config', file]);
      expect(init.code, init.err).toBe(0);
      expect(init.out).toContain('SLUICE_API_KEY');
      expect(init.out).toContain(`sluice check --config ${file}`);
      const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(raw.$schema).toBe('./sluice.config.schema.json');
      // The schema it names is there, and accepts the config.
      const schema = JSON.parse(readFileSync(join(folder.dir, 'sluice.config.schema.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      delete schema.$schema;
      const key = 'k'.repeat(32);
      const interpolated = interpolateEnv(raw, { SLUICE_API_KEY: key });
      expect(await compileSchema(schema, 'input', 'config').validate(interpolated)).toMatchObject({ ok: true });
      const config = parseGatewayConfig(interpolated);
      expect(config.listen.http).toMatchObject({ host: '127.0.0.1', auth: { type: 'apiKeys' } });
      expect(JSON.stringify(config.listen.http)).toContain(key);

      // A made-up key passes the check, with a warning that it is guessable; the key init suggests is not.
      const check = await runMain(['check', '--config', file], { SLUICE_API_KEY: key });
      expect(check.code, check.err).toBe(0);
      expect(check.out).toContain('Warning: API key local is guessable');
      const suggested = /node -e "(.+)"\)/.exec(init.out)?.[1];
      expect(suggested).toBeDefined();
      const strong = execFileSync(process.execPath, ['-e', suggested ?? ''], { encoding: 'utf8' }).trim();
      expect(guessableKeys([{ name: 'local', key: strong }])).toEqual([]);
      const strongCheck = await runMain(['check', '--config', file, '--json'], { SLUICE_API_KEY: strong });
      expect(strongCheck.code, strongCheck.err).toBe(0);
      expect(JSON.parse(strongCheck.out)).toMatchObject({ guessableKeys: [] });
      const weakCheck = await runMain(['check', '--config', file, '--json'], { SLUICE_API_KEY: key });
      expect(JSON.parse(weakCheck.out)).toMatchObject({ guessableKeys: [{ name: 'local' }] });
      // Without the key it does not start open.
      const unset = await runMain(['check', '--config', file]);
      expect(unset.code).toBe(2);
      expect(unset.err).toContain('SLUICE_API_KEY');
    } finally {
      folder.remove();
    }
  });

  it('keeps an existing config unless --force', async () => {
    const folder = tempConfig('{"name":"mine"}');
    try {
      const again = await runMain(['init', '--config', folder.file]);
      expect(again.code).toBe(2);
      expect(again.err).toContain('already exists');
      expect(readFileSync(folder.file, 'utf8')).toBe('{"name":"mine"}');
      expect((await runMain(['init', '--config', folder.file, '--force'])).code).toBe(0);
      expect(readFileSync(folder.file, 'utf8')).toContain('SLUICE_API_KEY');
      expect((await runMain(['serve', '--force'])).code).toBe(2);
    } finally {
      folder.remove();
    }
  });

  it('is what a run without a config points to', async () => {
    const folder = tempConfig('{}');
    try {
      const missing = join(folder.dir, 'nowhere.json');
      const run = await runMain(['serve', '--config', missing]);
      expect(run.code).toBe(2);
      expect(run.err).toContain(`Cannot read the config file ${missing}: no such file`);
      expect(run.err).toContain(`sluice init --config ${missing}`);
    } finally {
      folder.remove();
    }
  });
});
