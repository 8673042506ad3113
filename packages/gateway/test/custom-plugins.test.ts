// plugins.custom: third-party plugins named by module in the config, loaded by
// `sluice serve` (a real child process) and `sluice check`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { textOf } from '@sluice/testing';
import { loadCustomPlugins, parseGatewayConfig } from '@sluice/gateway';
import { REPO_ROOT, call, eventually, fixtureUpstream, httpClient, runCli, tempConfig } from './helpers.js';

const AUDIT_TRAIL = join(REPO_ROOT, 'examples', 'third-party-plugin', 'src', 'index.ts');

/** A config in a fresh folder whose plugins.custom names the audit-trail example by a path relative to it. */
function auditConfig(options: unknown, module?: string) {
  const config = tempConfig({});
  const entry = { module: module ?? relative(config.dir, AUDIT_TRAIL), export: 'auditTrail', options };
  writeFileSync(
    config.file,
    JSON.stringify({
      listen: { http: { port: 0 } },
      upstreams: [fixtureUpstream('local')],
      plugins: { custom: [entry] },
    }),
  );
  return config;
}

describe('plugins.custom through sluice serve', () => {
  it('loads a plugin by a path relative to the config file and runs it on every call', async () => {
    const config = tempConfig({});
    const auditFile = join(config.dir, 'audit.jsonl');
    const file = join(config.dir, 'sluice.config.json');
    writeFileSync(
      file,
      JSON.stringify({
        listen: { http: { port: 0 } },
        upstreams: [fixtureUpstream('local')],
        plugins: {
          custom: [{ module: relative(config.dir, AUDIT_TRAIL), export: 'auditTrail', options: { file: auditFile } }],
        },
      }),
    );
    const run = runCli(['serve', '--config', file], {}, { typescript: true });
    try {
      const ready = await run.event('gateway.ready');
      const client = await httpClient(String(ready.url));
      expect(textOf(await call(client, 'local_echo', { text: 'audited' }))).toBe('audited');
      await eventually(async () => readFileSync(auditFile, 'utf8').includes('"tool":"local_echo"'), 'the audit record');
      const record = JSON.parse(readFileSync(auditFile, 'utf8').trim().split('\n')[0]!) as Record<string, unknown>;
      expect(record).toMatchObject({ tool: 'local_echo', status: 'ok' });
      await client.close().catch(() => {});
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
      config.remove();
    }
  });

  it('fails at start, naming plugins.custom[0].module, when the module is not there', async () => {
    const config = auditConfig({ file: '/tmp/never.jsonl' }, './no-such-plugin.mjs');
    const run = runCli(['serve', '--config', config.file]);
    try {
      expect(await run.exited).toBe(2);
      expect(run.stderr()).toContain('plugins.custom[0].module');
      expect(run.stderr()).toContain('no-such-plugin.mjs');
    } finally {
      run.child.kill('SIGKILL');
      config.remove();
    }
  });

  it("fails at start, naming the bad option's config path, when the factory's schema rejects the options", async () => {
    const config = auditConfig({ file: '', includeArguments: 'yes' });
    const run = runCli(['serve', '--config', config.file], {}, { typescript: true });
    try {
      expect(await run.exited).toBe(2);
      expect(run.stderr()).toContain('plugins.custom[0].options.file');
      expect(run.stderr()).toContain('plugins.custom[0].options.includeArguments');
    } finally {
      run.child.kill('SIGKILL');
      config.remove();
    }
  });
});

describe('loadCustomPlugins', () => {
  const load = (custom: unknown[]) => loadCustomPlugins(parseGatewayConfig({ plugins: { custom } }), REPO_ROOT);

  it('names the missing export and offers the functions the module has', async () => {
    await expect(load([{ module: AUDIT_TRAIL }])).rejects.toThrow(
      /plugins\.custom\[0\]\.export: .* has no default export .*auditTrail/,
    );
  });

  it('reports a package that is not installed by its config path', async () => {
    await expect(load([{ module: '@acme/not-installed-sluice-plugin' }])).rejects.toThrow(
      /plugins\.custom\[0\]\.module: cannot load "@acme\/not-installed-sluice-plugin": the package .* is not installed/,
    );
  });

  it("names the plugin's own missing import, not the plugin file, when the file is there", async () => {
    // A plugin copied to /etc/sluice imports the kit, which does not resolve from there.
    const config = tempConfig({});
    try {
      const plugin = join(config.dir, 'plugin.mjs');
      writeFileSync(plugin, "import { definePlugin } from '@sluice/core';\nexport default () => definePlugin;\n");
      const error = await loadCustomPlugins(parseGatewayConfig({ plugins: { custom: [{ module: plugin }] } })).then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
      expect(error?.message).toContain('plugins.custom[0].module');
      expect(error?.message).not.toContain('no module at');
      expect(error?.message).toContain('imports "@sluice/core", which cannot be resolved from');
      expect(error?.message).toMatch(/npm install @sluice\/core/);
    } finally {
      config.remove();
    }
  });

  it('still says there is no module when the file itself is missing', async () => {
    await expect(load([{ module: './no-such-plugin.mjs' }])).rejects.toThrow(/no module at .*no-such-plugin\.mjs/);
  });

  it("refuses a misspelt option of the guide's plugin, naming it by its place in the config", async () => {
    await expect(
      load([{ module: AUDIT_TRAIL, export: 'auditTrail', options: { file: '/tmp/a.jsonl', includeArgument: true } }]),
    ).rejects.toThrow(/plugins\.custom\[0\]\.options\.includeArgument: Unrecognized key/);
  });

  it('returns the plugins in config order, each with its place in the config', async () => {
    const loaded = await load([
      { module: AUDIT_TRAIL, export: 'auditTrail', options: { file: '/tmp/a.jsonl' } },
      { module: AUDIT_TRAIL, export: 'auditTrail', options: { file: '/tmp/b.jsonl', mode: 'audit' } },
    ]);
    expect(loaded.map((c) => [c.path, c.plugin.name])).toEqual([
      ['plugins.custom[0]', 'audit-trail'],
      ['plugins.custom[1]', 'audit-trail'],
    ]);
  });
});
