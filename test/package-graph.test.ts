// The packages form layers: core at the bottom; the plugins, the stores and the
// packages that serve or import (HTTP, upstreams) on it; the gateway on top.
// A package's published code may import only packages it declares, each in a
// lower layer, so there is no import upward and no circle between packages.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifests = readdirSync(join(root, 'packages'))
  .filter((dir) => existsSync(join(root, 'packages', dir, 'package.json')))
  .map((dir) => ({
    dir,
    manifest: JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as Manifest,
  }));

/** The layer of a workspace package: what it may import lies strictly below. */
function layerOf(name: string): number {
  if (name === '@sluice/core') return 0;
  if (name === '@sluice/gateway') return 2;
  return 1;
}

/**
 * Sources whose text is another package's source: `sluice create plugin`'s templates write a new plugin's files,
 * whose imports (`@sluice/testing` in its test) are that plugin's, not the gateway's.
 */
const TEMPLATES = new Set(['packages/gateway/src/create-templates.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The workspace packages a package's src/ imports (static, dynamic or type-only). */
function importedPackages(dir: string): Set<string> {
  const found = new Set<string>();
  for (const file of sources(join(root, 'packages', dir, 'src'))) {
    if (TEMPLATES.has(relative(root, file))) continue;
    const text = readFileSync(file, 'utf8');
    const statements =
      /^\s*(?:import|export)\b[^;]*?from\s+'(@sluice\/[a-z0-9-]+)|^\s*import\s+'(@sluice\/[a-z0-9-]+)/gm;
    const calls = /\b(?:import|require)\(\s*'(@sluice\/[a-z0-9-]+)/g;
    for (const match of [...text.matchAll(statements), ...text.matchAll(calls)]) found.add((match[1] ?? match[2])!);
  }
  return found;
}

/** Workspace packages that `imports` reach in the declared graph, as a path back to `start` when there is a circle. */
function circleThrough(graph: Map<string, string[]>, start: string): string[] | undefined {
  const seen = new Set<string>();
  const walk = (node: string, path: string[]): string[] | undefined => {
    for (const next of graph.get(node) ?? []) {
      if (next === start) return [...path, next];
      if (seen.has(next)) continue;
      seen.add(next);
      const circle = walk(next, [...path, next]);
      if (circle) return circle;
    }
    return undefined;
  };
  return walk(start, [start]);
}

describe('the package graph', () => {
  it('reads every workspace package, core, the HTTP and the upstream packages among them', () => {
    const names = manifests.map((m) => m.manifest.name);
    expect(names).toContain('@sluice/core');
    expect(names).toContain('@sluice/http');
    expect(importedPackages('gateway')).toContain('@sluice/http');
    expect(names).toContain('@sluice/upstream');
    expect(importedPackages('gateway')).toContain('@sluice/upstream');
  });

  for (const { dir, manifest } of manifests) {
    it(`${manifest.name} imports only declared packages of a lower layer`, () => {
      const declared = new Set(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }));
      for (const imported of importedPackages(dir)) {
        if (imported === manifest.name) continue;
        expect(declared, `${manifest.name} imports ${imported} without declaring it`).toContain(imported);
        expect(
          layerOf(imported),
          `${manifest.name} imports ${imported}, a package of its own layer or above`,
        ).toBeLessThan(layerOf(manifest.name));
      }
    });
  }

  it('has no circle among the packages’ declared dependencies', () => {
    const graph = new Map(
      manifests.map(({ manifest }) => [
        manifest.name,
        Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter((n) => n.startsWith('@sluice/')),
      ]),
    );
    for (const name of graph.keys()) expect(circleThrough(graph, name), name).toBeUndefined();
  });

  it('finds a circle when there is one', () => {
    const circular = new Map([
      ['a', ['b']],
      ['b', ['a']],
    ]);
    expect(circleThrough(circular, 'a')).toEqual(['a', 'b', 'a']);
  });
});
