// The guides quote their code from source files that CI compiles, so a guide
// cannot drift from the API: every TypeScript block names its source region.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const docs = [...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f)), 'README.md'];

interface Block {
  readonly doc: string;
  readonly source: string | undefined;
  readonly code: string;
}

function blocks(doc: string): Block[] {
  const text = readFileSync(join(root, doc), 'utf8');
  const found: Block[] = [];
  const pattern = /(?:<!-- source: (\S+) -->\n)?```ts\n([\s\S]*?)\n```/g;
  for (const match of text.matchAll(pattern)) found.push({ doc, source: match[1], code: match[2] ?? '' });
  return found;
}

function region(source: string): string {
  const [file, name] = source.split('#') as [string, string];
  const text = readFileSync(join(root, file), 'utf8');
  const start = text.indexOf(`// #region ${name}\n`);
  const end = text.indexOf(`// #endregion ${name}`);
  if (start === -1 || end === -1) throw new Error(`${source}: no region "${name}"`);
  return text.slice(start + `// #region ${name}\n`.length, end).replace(/\n$/, '');
}

describe('the guides', () => {
  const all = docs.flatMap(blocks);

  it('have TypeScript blocks to check', () => {
    expect(all.length).toBeGreaterThan(0);
  });

  for (const block of all) {
    it(`${block.doc}: a block quotes ${block.source ?? '(no source)'} exactly`, () => {
      expect(block.source, 'every ts block needs a <!-- source: file#region --> line above it').toBeDefined();
      expect(block.code).toBe(region(block.source!));
    });
  }

  it('quote sources that compile', () => {
    const projects = new Set(all.filter((b) => b.source).map((b) => b.source!.split('/').slice(0, 2).join('/')));
    for (const project of projects) {
      execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, project, 'tsconfig.json')], {
        stdio: 'pipe',
      });
    }
  });
});
