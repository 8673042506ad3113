// The guides quote their code from source files that CI compiles, so a guide
// cannot drift from the API: every TypeScript block names its source region.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
    // One program over every quoted file (and what it imports), under the workspace's compiler options:
    // far cheaper than compiling each project, which `pnpm typecheck` does anyway.
    const files = [...new Set(all.filter((b) => b.source).map((b) => join(root, b.source!.split('#')[0]!)))];
    const dir = join(root, 'node_modules', '.cache', 'sluice-code-blocks');
    mkdirSync(dir, { recursive: true });
    const config = join(dir, 'tsconfig.json');
    const base = join(root, 'tsconfig.base.json');
    writeFileSync(config, JSON.stringify({ extends: base, compilerOptions: { noEmit: true }, files }));
    try {
      execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', config], { stdio: 'pipe' });
    } catch (error) {
      throw new Error(`a quoted source does not compile:\n${String((error as { stdout?: unknown }).stdout)}`, {
        cause: error,
      });
    }
  }, 120_000);
});
