// Every package states its version one way: a VERSION constant in
// src/version.ts, written from package.json by scripts/versions.mjs at build
// time. Nothing reads package.json at run time (a bundle has none to read).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packages = readdirSync(join(root, 'packages')).filter((p) =>
  existsSync(join(root, 'packages', p, 'package.json')),
);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe.each(packages)('packages/%s', (dir) => {
  const manifest = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };

  it('exports the VERSION of its package.json', async () => {
    const entry = (await import(join(root, 'packages', dir, 'src', 'index.ts'))) as { VERSION?: unknown };
    expect(entry.VERSION).toBe(manifest.version);
  });

  it('never reads its package.json at run time', () => {
    const readers = sourceFiles(join(root, 'packages', dir, 'src')).filter((file) =>
      /package\.json['"]/.test(readFileSync(file, 'utf8')),
    );
    expect(readers).toEqual([]);
  });
});

describe('plugin packages', () => {
  it.each(packages.filter((p) => p.startsWith('plugin-')))(
    '%s names its factory in src/plugin.ts and exports PLUGIN_NAME',
    async (dir) => {
      const entry = (await import(join(root, 'packages', dir, 'src', 'plugin.ts'))) as { PLUGIN_NAME?: unknown };
      const index = (await import(join(root, 'packages', dir, 'src', 'index.ts'))) as { PLUGIN_NAME?: unknown };
      expect(typeof entry.PLUGIN_NAME).toBe('string');
      expect(index.PLUGIN_NAME).toBe(entry.PLUGIN_NAME);
    },
  );
});
