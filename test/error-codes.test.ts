// Every error and refusal code a package exports has a line in that package's
// README and a test of that package that produces it. A code list is any
// export named `*ErrorCode` that is an object of strings.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Packages whose codes are not checked yet, each with the reason. */
const EXEMPT: Readonly<Record<string, string>> = {};

/**
 * Packages that serve a seam of another and so document and test some of its
 * codes: core's listener codes (`INSECURE_LISTEN`...) and the calls over HTTP
 * that produce its upstream codes live in @sluice/http, the upstream import's
 * own (`UPSTREAM_TIMEOUT`...) in @sluice/upstream.
 */
const SERVED_BY: Readonly<Record<string, readonly string[]>> = { core: ['http', 'upstream'] };

const packages = readdirSync(join(root, 'packages')).filter((p) =>
  existsSync(join(root, 'packages', p, 'src', 'index.ts')),
);

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules') return [];
    return statSync(path).isDirectory() ? filesUnder(path) : /\.(ts|mts|mjs)$/.test(name) ? [path] : [];
  });
}

interface CodeList {
  readonly name: string;
  readonly codes: Readonly<Record<string, string>>;
}

async function codeListsOf(pkg: string): Promise<CodeList[]> {
  const entry = (await import(join(root, 'packages', pkg, 'src', 'index.ts'))) as Record<string, unknown>;
  return Object.entries(entry)
    .filter(([name, value]) => name.endsWith('ErrorCode') && typeof value === 'object' && value !== null)
    .map(([name, value]) => ({ name, codes: value as Record<string, string> }));
}

/** How a test names a code: its string, or its key on the exported list. */
function namedIn(text: string, list: string, key: string, code: string): boolean {
  return text.includes(`'${code}'`) || text.includes(`"${code}"`) || new RegExp(`\\b${list}\\.${key}\\b`).test(text);
}

describe('error and refusal codes', () => {
  it('lists only packages that exist as exempt', () => {
    for (const pkg of Object.keys(EXEMPT)) expect(packages).toContain(pkg);
  });

  it('finds the code lists of core and of the plugins', async () => {
    expect((await codeListsOf('core')).map((l) => l.name)).toEqual(['CoreErrorCode']);
    expect((await codeListsOf('plugin-concurrency')).map((l) => l.name)).toEqual(['ConcurrencyErrorCode']);
  });

  for (const pkg of packages.filter((p) => !(p in EXEMPT))) {
    it(`${pkg}: every code has a line in the README and a test that produces it`, async () => {
      const homes = [pkg, ...(SERVED_BY[pkg] ?? [])];
      const readme = homes.map((home) => readFileSync(join(root, 'packages', home, 'README.md'), 'utf8')).join('\n');
      const tests = homes.flatMap((home) =>
        filesUnder(join(root, 'packages', home, 'test')).map((file) => readFileSync(file, 'utf8')),
      );
      const missing: string[] = [];
      for (const { name, codes } of await codeListsOf(pkg)) {
        for (const [key, code] of Object.entries(codes)) {
          if (!readme.includes(`\`${code}\``)) missing.push(`${code}: not in README.md`);
          if (!tests.some((text) => namedIn(text, name, key, code))) missing.push(`${code}: no test produces it`);
        }
      }
      expect(missing).toEqual([]);
    });
  }
});
