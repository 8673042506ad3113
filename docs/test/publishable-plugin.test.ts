// The guide's publishable package.json and tsconfig.json, applied to the example's sources: the build
// emits what the package's `exports` names, with declarations, and the built entry loads.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const example = join(root, 'examples', 'third-party-plugin');

/** The JSON blocks of the guide that follow the given sentence. */
function jsonBlockAfter(text: string, sentence: string): Record<string, unknown> {
  const at = text.indexOf(sentence);
  expect(at, sentence).toBeGreaterThan(-1);
  const block = /```json\n([\s\S]*?)\n```/.exec(text.slice(at));
  return JSON.parse(block![1]!) as Record<string, unknown>;
}

describe("the guide's publishable package", () => {
  it('builds the example with its tsconfig into what its package.json exports, and loads', async () => {
    const guide = readFileSync(join(root, 'docs', 'writing-a-plugin.md'), 'utf8');
    const manifest = jsonBlockAfter(guide, 'for the package on npm');
    const tsconfig = jsonBlockAfter(guide, 'and a `tsconfig.json` that emits');
    // Inside the example's folder, so that its node_modules (core, zod) resolve as an installed package's would.
    const dir = mkdtempSync(join(example, '.publish-'));
    try {
      cpSync(join(example, 'src'), join(dir, 'src'), { recursive: true });
      writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest));
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], {
        stdio: 'pipe',
      });
      const entry = (manifest.exports as Record<string, { types: string; default: string }>)['.']!;
      expect(existsSync(join(dir, entry.types))).toBe(true);
      expect(existsSync(join(dir, entry.default))).toBe(true);
      const loaded = (await import(pathToFileURL(join(dir, entry.default)).href)) as Record<string, unknown>;
      expect(typeof loaded.auditTrail).toBe('function');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
