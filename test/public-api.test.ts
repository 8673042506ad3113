// Anything a package's index.ts exports is public API. Each package lists its
// API in public-api.txt; an export that appears or disappears without that
// list changing fails here, and so does `export *`, which would hide it.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packages = readdirSync(join(root, 'packages')).filter((p) =>
  existsSync(join(root, 'packages', p, 'src', 'index.ts')),
);
const entryPoints = packages.flatMap((p) => {
  const pkg = JSON.parse(readFileSync(join(root, 'packages', p, 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
  };
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === 'object' && target !== null && 'sluice:source' in target)
    .map(([subpath, target]) => ({ pkg: p, subpath, file: (target as Record<string, string>)['sluice:source']! }));
});

/** `value name` / `type name` lines for every name an entry point exports. */
function declared(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (/export\s*\*/.test(text)) throw new Error(`${file} uses export *: list every export by name`);
  const names: string[] = [];
  for (const match of text.matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const raw of match[2]!.split(',')) {
      const part = raw.trim();
      if (!part) continue;
      const isType = Boolean(match[1]) || part.startsWith('type ');
      const name = part
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()!
        .trim();
      names.push(`${isType ? 'type' : 'value'} ${name}`);
    }
  }
  for (const match of text.matchAll(
    /export\s+(?:declare\s+)?(const|function|class|interface|type|enum)\s+([A-Za-z0-9_$]+)/g,
  )) {
    names.push(`${match[1] === 'interface' || match[1] === 'type' ? 'type' : 'value'} ${match[2]}`);
  }
  return [...new Set(names)].sort();
}

describe('public API', () => {
  it('finds the packages', () => {
    expect(packages).toContain('core');
  });

  for (const entry of entryPoints) {
    const label = `@sluice/${entry.pkg}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}`;
    it(`${label} exports exactly what its public-api.txt lists`, async () => {
      const listFile = join(root, 'packages', entry.pkg, 'public-api.txt');
      expect(existsSync(listFile), `${listFile} is missing`).toBe(true);
      const sections = readFileSync(listFile, 'utf8').split(/^## /m).filter(Boolean);
      const section = sections.find((s) => s.startsWith(`${entry.subpath}\n`));
      expect(section, `public-api.txt has no "## ${entry.subpath}" section`).toBeDefined();
      const listed = section!
        .split('\n')
        .slice(1)
        .map((l) => l.trim())
        .filter(Boolean)
        .sort();
      const source = join(root, 'packages', entry.pkg, entry.file);
      expect(declared(source)).toEqual(listed);

      const module = (await import(source)) as Record<string, unknown>;
      const values = listed
        .filter((l) => l.startsWith('value '))
        .map((l) => l.slice(6))
        .sort();
      expect(Object.keys(module).sort()).toEqual(values);
    });
  }
});
