// Every package states its version one way: a VERSION constant in
// src/version.ts, written from package.json by scripts/versions.mjs at build
// time. Nothing reads package.json at run time (a bundle has none to read).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packages = readdirSync(join(root, 'packages')).filter((p) =>
  existsSync(join(root, 'packages', p, 'package.json')),
);

/** Sources that write a package.json for a new project (the plugin scaffold's templates), never reading one. */
const WRITES_MANIFESTS = new Set(['packages/gateway/src/create-templates.ts']);

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
    const readers = sourceFiles(join(root, 'packages', dir, 'src')).filter((file) => {
      const text = readFileSync(file, 'utf8');
      // `sluice create plugin` writes a package.json for a new project: its templates name the file and
      // must still read none.
      if (WRITES_MANIFESTS.has(relative(root, file)))
        return /(?:readFile|require|import)\b[^\n]*package\.json/.test(text);
      return /package\.json['"]/.test(text);
    });
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
