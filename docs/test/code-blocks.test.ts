// The guides quote their code from source files that CI compiles, so a guide
// cannot drift from the API: every TypeScript block names its source region.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// The same pairing `node scripts/sync-code-blocks.mjs` mends.
import { documentsWithBlocks, region } from '../../scripts/sync-code-blocks.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

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

describe('the guides', () => {
  const all = documentsWithBlocks().flatMap(blocks);

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
      execFileSync(
        process.execPath,
        [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, project, 'tsconfig.json')],
        {
          stdio: 'pipe',
        },
      );
    }
  });
});
