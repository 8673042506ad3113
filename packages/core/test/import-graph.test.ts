import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Every module of src/ with the modules of src/ it imports (type-only imports included). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/^(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gms)].map((m) =>
      relative(SRC, resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts'))),
    );
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

/** The import circles that pass through `start`, as paths from it back to it. */
function circlesThrough(graph: Map<string, string[]>, start: string): string[][] {
  const found: string[][] = [];
  const seen = new Set<string>();
  const walk = (node: string, path: string[]): void => {
    for (const next of graph.get(node) ?? []) {
      if (next === start) found.push([...path, next]);
      else if (!seen.has(next)) {
        seen.add(next);
        walk(next, [...path, next]);
      }
    }
  };
  walk(start, [start]);
  return found;
}

describe('the import graph of core', () => {
  const graph = importGraph();

  it('reads the imports of the server module', () => {
    expect(graph.get('server.ts')).toContain('tool-table.ts');
    expect(graph.get('server.ts')).toContain('upstreaming.ts');
  });

  it('has no circle through server.ts', () => {
    expect(circlesThrough(graph, 'server.ts')).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const circular = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(circlesThrough(circular, 'a.ts')).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
