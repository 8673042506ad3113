// What the READMEs and guides claim, checked against the code where a claim can be checked:
// the conformance baselines they count, the files and headings they link to, and the `sluice`
// commands and flags they show. A stale claim fails here, as a stale code block fails the
// code-block sync.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { USAGE } from '../packages/gateway/src/usage.js';
import { documentsWithBlocks } from '../scripts/sync-code-blocks.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

const examples = readdirSync(join(root, 'examples'))
  .map((name) => join('examples', name, 'README.md'))
  .filter((file) => existsSync(join(root, file)));
const documents: string[] = [...documentsWithBlocks(), ...examples];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = read(file).replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

describe('the root README', () => {
  it('counts the conformance checks each baseline holds', () => {
    const table = /\| target \| checks baselined \|\n\|---\|---\|\n((?:\|.*\|\n)+)/.exec(read('README.md'));
    expect(table, 'the baseline table').not.toBeNull();
    const rows = table![1]!.trim().split('\n');
    expect(rows).toHaveLength(4);
    for (const row of rows) {
      const cells = /^\| the (server|gateway), (\d{4}-\d{2}-\d{2}) \| (.+) \|$/.exec(row);
      expect(cells, row).not.toBeNull();
      const [, kind, revision, count] = cells!;
      const target = `${kind}-${revision}`;
      const baseline = read(`examples/conformance-server/baselines/${target}.yml`);
      const entries = baseline.split('\n').filter((line) => /^\s*-\s/.test(line)).length;
      expect(count, `${target}.yml has ${entries} entries`).toBe(entries === 0 ? 'none' : String(entries));
    }
  });
});

describe.each(documents)('%s', (doc) => {
  it('links only to files that exist, and to headings they have', () => {
    const text = read(doc).replace(/```[\s\S]*?```/g, '');
    const broken: string[] = [];
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [path, hash] = target.split('#') as [string, string | undefined];
      const file = path === '' ? doc : join(dirname(doc), path);
      if (!existsSync(join(root, file))) {
        broken.push(target);
        continue;
      }
      if (hash !== undefined && file.endsWith('.md') && !anchors(file).has(hash)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it('shows only sluice commands and flags that the CLI has', () => {
    const commands = new Set([...USAGE.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]!));
    const flags = new Set([...USAGE.matchAll(/(--[a-z-]+)/g)].map((m) => m[1]!));
    const wrong: string[] = [];
    for (const match of read(doc).matchAll(
      /(?:^|[`\s])sluice ([a-z]+)((?: +(?:--?[a-z-]+|<[^>]+>|\[[^\]]+\]|[^\s`|]+))*)/gm,
    )) {
      const [, command, rest] = match as unknown as [string, string, string];
      if (!commands.has(command)) {
        // Prose ("sluice serve" vs "sluice gateway"): only a word that reads as a command counts.
        if (/^(serve|check|schema|ledger|init|help|start|run|config|validate|create)$/.test(command))
          wrong.push(`sluice ${command}`);
        continue;
      }
      for (const flag of rest.matchAll(/(--[a-z-]+)/g))
        if (!flags.has(flag[1]!)) wrong.push(`sluice ${command} ${flag[1]}`);
    }
    expect(wrong).toEqual([]);
  });
});
